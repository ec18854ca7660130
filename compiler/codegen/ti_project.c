/*
 * --emit=ti-project: the TI CGT C7000 build of a compiled model
 * (ti_project.h). Every file is written from what the compile produced
 * (lib*.c, lib0.h, weights.bin, the module lib0.out) and from the export
 * table of cstatic/c7x_exports.def; nothing here knows a model.
 */
#define _POSIX_C_SOURCE 200809L

#include "ti_project.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "module.h"
#include "util/fs.h"

/* ---- the firmware's export table, by build option ---------------------- */

typedef struct export_group {
  const char *name;
  const char *option; /* the dsp_syms.c macro that turns it on; NULL: always */
} export_group;

/* As the firmware lists them (--list-exports): the custom C7x kernels are
 * in every firmware, so they are "runtime" there and here. */
enum { G_LIBC, G_RUNTIME, G_MMALIB, G_TIDL, N_GROUPS };
#define G_C7X G_RUNTIME
static const export_group groups[N_GROUPS] = {
    [G_LIBC] = {"libc", NULL},
    [G_RUNTIME] = {"runtime", NULL},
    [G_MMALIB] = {"mmalib", "C7X_FW_MMALIB"},
    [G_TIDL] = {"tidl", "C7X_FW_TIDL"},
};

static const struct {
  const char *name;
  int group;
} exports[] = {
#define C7X_EXPORT(fn, group) {#fn, G_##group},
#include "cstatic/c7x_exports.def"
};
enum { N_EXPORTS = sizeof exports / sizeof exports[0] };

/* The group exporting name, or -1. */
static int group_of(const char *name) {
  for (int i = 0; i < N_EXPORTS; i++)
    if (!strcmp(exports[i].name, name)) return exports[i].group;
  return -1;
}

/* ---- files ------------------------------------------------------------- */

typedef struct out_file {
  FILE *f;
  const char *path;
} out_file;

static cs_status open_out(out_file *o, const char *path) {
  o->path = path;
  o->f = fopen(path, "wb");
  return o->f ? CS_OK : cs_error(CS_ERR_IO, "cannot write %s: %s", path, strerror(errno));
}

static void say(out_file *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(out_file *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(o->f, fmt, ap);
  va_end(ap);
}

static cs_status close_out(out_file *o) {
  int bad = ferror(o->f);
  if (fclose(o->f) != 0) bad = 1;
  return bad ? cs_error(CS_ERR_IO, "cannot write %s (disk full?)", o->path) : CS_OK;
}

static cs_status make_dir(const char *path) {
  if (mkdir(path, 0777) != 0 && errno != EEXIST) return cs_error(CS_ERR_IO, "cannot create %s: %s", path, strerror(errno));
  return CS_OK;
}

/* The header files under src (a tree of *.h, and the *.def tables they
 * include) into dst. */
static cs_status copy_headers(const char *src, const char *dst, int depth) {
  if (depth > 4) return cs_error(CS_ERR_IO, "%s: header directories nested too deep", src);
  cs_status st = make_dir(dst);
  DIR *d = st == CS_OK ? opendir(src) : NULL;
  if (st == CS_OK && !d) return cs_error(CS_ERR_IO, "cannot read %s: %s", src, strerror(errno));
  struct dirent *e;
  while (st == CS_OK && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char from[4096], to[4096];
    if ((size_t)snprintf(from, sizeof from, "%s/%s", src, e->d_name) >= sizeof from ||
        (size_t)snprintf(to, sizeof to, "%s/%s", dst, e->d_name) >= sizeof to) {
      st = cs_error(CS_ERR_IO, "path too long under %s", src);
      break;
    }
    struct stat sb;
    if (stat(from, &sb) != 0) continue;
    size_t len = strlen(e->d_name);
    if (S_ISDIR(sb.st_mode)) st = copy_headers(from, to, depth + 1);
    else if (S_ISREG(sb.st_mode) && ((len > 2 && !strcmp(e->d_name + len - 2, ".h")) ||
                                     (len > 4 && !strcmp(e->d_name + len - 4, ".def"))))
      st = cs_fs_copy_file(from, to);
  }
  closedir(d);
  return st;
}

static cs_status copy_header_tree(const char *src, const char *dst) { return copy_headers(src, dst, 0); }

/* One project file: `make` (a copy or a conversion) from from_dir/from_name
 * to proj/to_name. */
static cs_status into_project(const char *from_dir, const char *from_name, const char *proj, const char *to_name,
                              cs_status (*make)(const char *from, const char *to)) {
  char from[4400], to[4400];
  snprintf(from, sizeof from, "%s/%s", from_dir, from_name);
  snprintf(to, sizeof to, "%s/%s", proj, to_name);
  return make(from, to);
}

/* ---- weights.asm ------------------------------------------------------- */

/* The spec's bin_to_asm step in TI assembly: the bytes of weights.bin in
 * .rodata.weights between _binary_weights_bin_start and _end, then
 * _binary_weights_bin_size, an 8-byte little-endian word holding their
 * distance (the firmware reads a word, as from the emulator's modules).
 * Only .byte: its width is the same in every TI assembler. */
static cs_status write_weights_asm(const char *weights_bin, const char *path) {
  FILE *in = fopen(weights_bin, "rb");
  if (!in) return cs_error(CS_ERR_IO, "cannot read %s: %s", weights_bin, strerror(errno));
  out_file o;
  cs_status st = open_out(&o, path);
  if (st != CS_OK) {
    fclose(in);
    return st;
  }
  say(&o, "; weights.asm: weights.bin in the C7x module's .rodata.weights section (the\n"
          "; spec's bin_to_asm.py step). Generated by cstatic compile --emit=ti-project.\n"
          "; 4096-byte aligned: the model needs at most that (MODEL_WEIGHTS_ALIGN).\n\n"
          "\t.sect \".rodata.weights\"\n"
          "\t.align 4096\n"
          "\t.global _binary_weights_bin_start\n"
          "\t.global _binary_weights_bin_end\n"
          "\t.global _binary_weights_bin_size\n\n"
          "_binary_weights_bin_start:\n");
  /* 16 bytes a line: "\t.byte 0xhh,0xhh,...\n", built here (weights run to
   * tens of MiB). */
  static const char hex[] = "0123456789abcdef";
  unsigned char buf[65536];
  char line[8 + 16 * 5 + 2];
  size_t n, total = 0, col = 0, len = 0;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
    for (size_t i = 0; i < n; i++) {
      if (col == 0) {
        memcpy(line, "\t.byte ", 7);
        len = 7;
      } else {
        line[len++] = ',';
      }
      line[len++] = '0';
      line[len++] = 'x';
      line[len++] = hex[buf[i] >> 4];
      line[len++] = hex[buf[i] & 15];
      if (++col == 16) {
        line[len++] = '\n';
        fwrite(line, 1, len, o.f);
        col = 0;
      }
    }
    total += n;
  }
  if (col) {
    line[len++] = '\n';
    fwrite(line, 1, len, o.f);
  }
  int bad = ferror(in);
  fclose(in);
  say(&o, "_binary_weights_bin_end:\n\n"
          "; the size in bytes, a 64-bit little-endian word: %zu\n"
          "\t.align 8\n"
          "_binary_weights_bin_size:\n\t.byte ",
      total);
  for (int i = 0; i < 8; i++) say(&o, "%s0x%02x", i ? "," : "", (unsigned)(((uint64_t)total >> (8 * i)) & 0xffu));
  say(&o, "\n");
  st = close_out(&o);
  if (st == CS_OK && bad) st = cs_error(CS_ERR_IO, "cannot read %s", weights_bin);
  return st;
}

/* ---- dsp_syms.c --------------------------------------------------------- */

static cs_status write_dsp_syms(const char *path) {
  out_file o;
  cs_status st = open_out(&o, path);
  if (st != CS_OK) return st;
  say(&o, "/*\n"
          " * dsp_syms.c — the pseudo-firmware of the two-stage DLOAD link: one exported\n"
          " * stub per symbol the C7x firmware exports, so that TI's linker resolves the\n"
          " * model's references when it links lib0.out against dsp_syms.out and records\n"
          " * them as imports. Never run: on the board DLOAD binds each import to the\n"
          " * firmware's own definition.\n"
          " *\n"
          " * Generated by `cstatic compile --emit=ti-project` from cstatic's export table\n"
          " * (include/cstatic/c7x_exports.def), the table the firmware emulator (c7x_fw) is\n"
          " * built from. The firmware's build options choose the groups, as its\n"
          " * --mmalib and --tidl do: C7X_FW_MMALIB, C7X_FW_TIDL (the Makefile's\n"
          " * FW_MMALIB, FW_TIDL). The stubs carry no prototypes: they only name symbols\n"
          " * (compile with -fno-builtin on a host compiler).\n"
          " */\n"
          "#if defined(__TI_COMPILER_VERSION__)\n"
          "#define DSP_SYM __declspec(dllexport)\n"
          "#else\n"
          "#define DSP_SYM __attribute__((visibility(\"default\")))\n"
          "#endif\n\n"
          "#ifndef C7X_FW_MMALIB\n#define C7X_FW_MMALIB 0\n#endif\n"
          "#ifndef C7X_FW_TIDL\n#define C7X_FW_TIDL 0\n#endif\n"
          "#if C7X_FW_TIDL && !C7X_FW_MMALIB\n"
          "#error \"C7X_FW_TIDL needs C7X_FW_MMALIB (TIDL's kernels call MMALIB)\"\n"
          "#endif\n\n"
          "/* The entry of dsp_syms.out (a dynamic executable needs one). */\n"
          "void dsp_syms_entry(void) {}\n");
  for (int g = 0; g < N_GROUPS; g++) {
    int n = 0;
    for (int i = 0; i < N_EXPORTS; i++) n += exports[i].group == g;
    say(&o, "\n/* %s (%d) */\n", groups[g].name, n);
    if (groups[g].option) say(&o, "#if %s\n", groups[g].option);
    for (int i = 0; i < N_EXPORTS; i++)
      if (exports[i].group == g) say(&o, "DSP_SYM void %s(void) {}\n", exports[i].name);
    if (groups[g].option) say(&o, "#endif\n");
  }
  return close_out(&o);
}

/* ---- c7x_dynmod.cmd ------------------------------------------------------ */

static const char *const module_exports[] = {"cg_main_dsp", "model_desc", "_binary_weights_bin_start",
                                              "_binary_weights_bin_end", "_binary_weights_bin_size"};

static cs_status write_cmd(const char *path, char **imports, const int *group, int n) {
  out_file o;
  cs_status st = open_out(&o, path);
  if (st != CS_OK) return st;
  say(&o, "/*\n"
          " * c7x_dynmod.cmd — the DLOAD linker command file of this model (TI C7000\n"
          " * linker, the second stage of the Makefile). Generated by cstatic compile\n"
          " * --emit=ti-project.\n"
          " *\n"
          " * lib0.out is a dynamic library: the C7x firmware's DLOAD places it in its DDR\n"
          " * heap, resolves its imports against its export table and applies its\n"
          " * dynamic relocations.\n"
          " */\n"
          "--dynamic=lib\n"
          "--relocatable\n\n"
          "/* What the firmware looks up by name after loading the module. */\n");
  for (size_t i = 0; i < sizeof module_exports / sizeof module_exports[0]; i++)
    say(&o, "--export=%s\n", module_exports[i]);
  say(&o, "\n/* Imports: the module's undefined symbols (%d), each exported by the firmware\n"
          " * (its group in the comment; dsp_syms.out stands in for the firmware at link\n"
          " * time). */\n",
      n);
  for (int i = 0; i < n; i++) say(&o, "--import=%s /* %s */\n", imports[i], groups[group[i]].name);
  say(&o, "\nSECTIONS\n{\n"
          "    .text            : {}\n"
          "    .const           : {}\n"
          "    .rodata          : {}\n"
          "    /* weights.asm: weights.bin, page aligned */\n"
          "    .rodata.weights  : { *(.rodata.weights) } palign(4096)\n"
          "    .neardata        : {}\n"
          "    .fardata         : {}\n"
          "    .data            : {}\n"
          "    .bss             : {}\n"
          "}\n");
  return close_out(&o);
}

/* ---- Makefile ------------------------------------------------------------ */

static cs_status write_makefile(const char *path, char **sources, int n_sources, int fw_mmalib, int fw_tidl) {
  out_file o;
  cs_status st = open_out(&o, path);
  if (st != CS_OK) return st;
  say(&o, "# Builds lib0.out, this model's C7x DLOAD module, with TI's C7000 code-\n"
          "# generation tools:\n"
          "#\n"
          "#     make CGT=/path/to/ti-cgt-c7000_<version>     (or set TI_CGT_C7000_PATH)\n"
          "#\n"
          "# Two stages (the spec's \"Building a DLOAD Module\"):\n"
          "#   1. dsp_syms.out: the pseudo-firmware, a stub per firmware export\n"
          "#      (dsp_syms.c), linked as a dynamic executable;\n"
          "#   2. lib0.out: lib*.c and weights.asm linked as a dynamic library against\n"
          "#      dsp_syms.out with c7x_dynmod.cmd.\n"
          "# FW_MMALIB / FW_TIDL: the build options of the firmware the module will\n"
          "# run on (its --mmalib / --tidl); the defaults are what this model needs.\n"
          "# Generated by cstatic compile --emit=ti-project.\n\n"
          "CGT       ?= $(TI_CGT_C7000_PATH)\n"
          "CL7X      := $(CGT)/bin/cl7x\n"
          "SILICON   ?= 7504\n"
          "FW_MMALIB ?= %d\n"
          "FW_TIDL   ?= %d\n"
          "CFLAGS    ?= --silicon_version=$(SILICON) --abi=eabi -O3\n"
          "INCLUDES  := -I$(CGT)/include -Iinclude -I.\n"
          "SOURCES   :=",
      fw_mmalib, fw_tidl);
  for (int i = 0; i < n_sources; i++) say(&o, " %s", sources[i]);
  say(&o, "\nOBJECTS   := $(SOURCES:.c=.obj) weights.obj\n\n"
          "all: lib0.out\n\n"
          "cgt:\n"
          "\t@test -x \"$(CL7X)\" || { echo \"cl7x not found at '$(CL7X)': make CGT=/path/to/ti-cgt-c7000\" >&2; exit 1; }\n\n"
          "dsp_syms.obj: dsp_syms.c | cgt\n"
          "\t$(CL7X) $(CFLAGS) -DC7X_FW_MMALIB=$(FW_MMALIB) -DC7X_FW_TIDL=$(FW_TIDL) -c dsp_syms.c --output_file=$@\n\n"
          "dsp_syms.out: dsp_syms.obj\n"
          "\t$(CL7X) -z --dynamic=exe --entry_point=dsp_syms_entry dsp_syms.obj --output_file=$@ --map_file=dsp_syms.map\n\n"
          "%%.obj: %%.c lib0.h | cgt\n"
          "\t$(CL7X) $(CFLAGS) $(INCLUDES) -c $< --output_file=$@\n\n"
          "weights.obj: weights.asm | cgt\n"
          "\t$(CL7X) $(CFLAGS) -c weights.asm --output_file=$@\n\n"
          "lib0.out: $(OBJECTS) dsp_syms.out c7x_dynmod.cmd\n"
          "\t$(CL7X) -z c7x_dynmod.cmd $(OBJECTS) dsp_syms.out --output_file=$@ --map_file=lib0.map\n\n"
          "clean:\n"
          "\trm -f *.obj dsp_syms.out lib0.out *.map\n\n"
          ".PHONY: all cgt clean\n");
  return close_out(&o);
}

/* ---- README.md ------------------------------------------------------------ */

static cs_status write_readme(const char *path, const cs_ti_project_options *opt, int n_imports, int fw_mmalib,
                              int fw_tidl) {
  out_file o;
  cs_status st = open_out(&o, path);
  if (st != CS_OK) return st;
  say(&o, "# %s: the C7x DLOAD module, built with TI's tools\n\n"
          "Generated by `cstatic compile --emit=ti-project` for the target\n"
          "`%s`.\n\n"
          "## Build\n\n"
          "```sh\n"
          "make CGT=/path/to/ti-cgt-c7000_<version>\n"
          "```\n\n"
          "gives `lib0.out`, in two stages: `dsp_syms.out` (the pseudo-firmware: a stub\n"
          "for each symbol the firmware exports, `dsp_syms.c`), then the model\n"
          "(`lib*.c`) and its weights (`weights.asm`) linked as a dynamic library\n"
          "against it with `c7x_dynmod.cmd` (`--dynamic=lib`, `--relocatable`, and\n"
          "%d `--import=` lines: the symbols the module leaves to the firmware).\n\n"
          "The firmware the module runs on must have been built with what it\n"
          "imports: this model needs %s. The Makefile's `FW_MMALIB=%d FW_TIDL=%d`\n"
          "say so; a firmware without them refuses the module at load, naming the\n"
          "missing symbol. `SILICON` (default 7504, the AM67A's C7x) and `CFLAGS`\n"
          "may be set on the command line; the C is C99 (add your CGT's C99 option to\n"
          "`CFLAGS` if it defaults to an older dialect).\n\n"
          "## Run on the AM67A\n\n"
          "```sh\n"
          "scp lib0.out root@am67a:/tmp/\n"
          "# on the board:\n"
          "H=$(c7x_compute load /tmp/lib0.out | cut -d' ' -f2)   # \"handle N\"\n"
          "c7x_compute info $H                                   # its inputs and outputs\n"
          "c7x_compute infer $H 0 --input in.bin --output out.bin --dtype float32\n"
          "c7x_compute unload $H\n"
          "```\n\n"
          "One `--input` per model input and one `--output` per output, raw\n"
          "little-endian bytes. A model compiled with `-profile-layers=1` adds\n"
          "`--profile` to `infer` for per-layer C7x cycles. On the host the firmware\n"
          "emulator runs `../lib0.out` (the same C built by the host compiler) with\n"
          "the same commands: start `c7x_fw --socket /tmp/c7x.sock &` and set\n"
          "`C7X_FW_SOCKET=/tmp/c7x.sock`.\n\n"
          "## What was and was not run\n\n"
          "No TI tools were available where this folder was generated and tested.\n"
          "cstatic's tests check what can be checked without them:\n\n"
          "- `dsp_syms.c` and `lib*.c` compile with a host C compiler against the\n"
          "  host stand-in headers in `include/cstatic/platform/ti_stub`;\n"
          "- the bytes of `weights.asm` parse back to `weights.bin` exactly;\n"
          "- the `--import=` list equals the undefined symbols of the module the\n"
          "  host compiler built from the same C (`../lib0.out`), and every import\n"
          "  is in `dsp_syms.c`;\n"
          "- `dsp_syms.c` defines exactly the firmware emulator's exports for each\n"
          "  build option (`c7x_fw --list-exports`, and the MMALIB and TIDL builds).\n\n"
          "Not run: `cl7x` on any of these files, the TI linker on\n"
          "`c7x_dynmod.cmd` (its options follow the spec; the section list is a\n"
          "plausible C7000 EABI one), DLOAD on the result, and the board. TI's\n"
          "compiler may also call helpers the host compiler did not (`--import=`\n"
          "lists what the host build needed): the link reports any it cannot resolve\n"
          "against `dsp_syms.out`.\n",
      opt->model_name ? opt->model_name : "model", opt->target ? opt->target : "c_static_lib -mcpu=c7x", n_imports,
      fw_tidl ? "a firmware built with TIDL (and so MMALIB)" : fw_mmalib ? "a firmware built with MMALIB"
                                                                          : "no MMALIB or TIDL in the firmware",
      fw_mmalib, fw_tidl);
  return close_out(&o);
}

/* ---- the project ---------------------------------------------------------- */

cs_status cs_ti_project_write(const char *dir, const cs_ti_project_options *opt, int *n_imports) {
  char proj[4096], path[4200], module[4200];
  if ((size_t)snprintf(proj, sizeof proj, "%s/%s", dir, CS_TI_PROJECT_DIR) >= sizeof proj)
    return cs_error(CS_ERR_IO, "model directory path is too long: %.64s...", dir);
  snprintf(module, sizeof module, "%s/%s", dir, CS_MODULE_FILE);

  /* The imports, each in some firmware build's exports. */
  char **imports = NULL;
  int n = 0;
  cs_status st = cs_module_undefined_symbols(module, &imports, &n);
  if (st != CS_OK) return st;
  int *group = calloc((size_t)(n ? n : 1), sizeof *group);
  int fw_mmalib = 0, fw_tidl = 0;
  if (!group) st = cs_error(CS_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n && st == CS_OK; i++) {
    group[i] = group_of(imports[i]);
    if (group[i] < 0)
      st = cs_error(CS_ERR_IO, "%s needs '%s', which no C7x firmware build exports (cstatic/c7x_exports.def): the "
                    "module could not load", module, imports[i]);
    fw_tidl |= group[i] == G_TIDL;
    fw_mmalib |= group[i] == G_MMALIB || group[i] == G_TIDL;
  }

  char **sources = NULL;
  int n_sources = 0;
  if (st == CS_OK) st = cs_module_list_sources(dir, &sources, &n_sources);
  if (st == CS_OK) st = make_dir(proj);
  for (int i = 0; i < n_sources && st == CS_OK; i++) st = into_project(dir, sources[i], proj, sources[i], cs_fs_copy_file);
  if (st == CS_OK) st = into_project(dir, "lib0.h", proj, "lib0.h", cs_fs_copy_file);
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s/include", proj);
    st = make_dir(path);
  }
  if (st == CS_OK) st = into_project(opt->include_dir, "cstatic", proj, "include/cstatic", copy_header_tree);
  if (st == CS_OK) st = into_project(dir, "weights.bin", proj, "weights.asm", write_weights_asm);
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s/dsp_syms.c", proj);
    st = write_dsp_syms(path);
  }
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s/c7x_dynmod.cmd", proj);
    st = write_cmd(path, imports, group, n);
  }
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s/Makefile", proj);
    st = write_makefile(path, sources, n_sources, fw_mmalib, fw_tidl);
  }
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s/README.md", proj);
    st = write_readme(path, opt, n, fw_mmalib, fw_tidl);
  }
  if (st == CS_OK && n_imports) *n_imports = n;
  cs_module_free_names(sources, n_sources);
  free(group);
  cs_module_free_names(imports, n);
  return st;
}
