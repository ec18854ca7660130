/*
 * The undefined symbols of a built module: the ELF64 little-endian shared
 * object that cs_module_build links (x86-64 or AArch64). Read from its
 * section headers: SHT_DYNSYM and the string table it links to. Every
 * offset and size is checked against the file before it is used; a file
 * that is not such an object is an error naming what is wrong.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

static int in_file(uint64_t off, uint64_t len, size_t size) { return off <= size && len <= size - off; }

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void cs_module_free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

static cs_status read_all(const char *path, uint8_t **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return cs_error(CS_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return cs_error(CS_ERR_IO, "cannot read %s: not a regular file", path);
  }
  *data = malloc((size_t)n + 1);
  if (!*data) {
    fclose(f);
    return cs_error(CS_ERR_NOMEM, "out of memory reading %s (%ld bytes)", path, n);
  }
  size_t got = fread(*data, 1, (size_t)n, f);
  fclose(f);
  if (got != (size_t)n) {
    free(*data);
    return cs_error(CS_ERR_IO, "short read of %s", path);
  }
  *size = (size_t)n;
  return CS_OK;
}

cs_status cs_module_undefined_symbols(const char *path, char ***names_out, int *n_out) {
  uint8_t *file = NULL;
  size_t size = 0;
  *names_out = NULL;
  *n_out = 0;
  cs_status st = read_all(path, &file, &size);
  if (st != CS_OK) return st;
  Elf64_Ehdr eh;
  char **names = NULL;
  int n = 0;
  if (size < sizeof eh || memcmp(file, ELFMAG, SELFMAG) || file[EI_CLASS] != ELFCLASS64 || file[EI_DATA] != ELFDATA2LSB) {
    st = cs_error(CS_ERR_IO, "%s is not a little-endian ELF64 file", path);
    goto done;
  }
  memcpy(&eh, file, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || !in_file(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size)) {
    st = cs_error(CS_ERR_IO, "%s: section headers outside the file", path);
    goto done;
  }
  for (int s = 0; s < eh.e_shnum && st == CS_OK; s++) {
    Elf64_Shdr sh, strh;
    memcpy(&sh, file + eh.e_shoff + (uint64_t)s * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_entsize != sizeof(Elf64_Sym) || !in_file(sh.sh_offset, sh.sh_size, size) ||
        sh.sh_link >= eh.e_shnum) {
      st = cs_error(CS_ERR_IO, "%s: malformed dynamic symbol table", path);
      break;
    }
    memcpy(&strh, file + eh.e_shoff + (uint64_t)sh.sh_link * sizeof strh, sizeof strh);
    if (!in_file(strh.sh_offset, strh.sh_size, size) || strh.sh_size == 0 ||
        file[strh.sh_offset + strh.sh_size - 1] != '\0') {
      st = cs_error(CS_ERR_IO, "%s: malformed dynamic string table", path);
      break;
    }
    uint64_t count = sh.sh_size / sizeof(Elf64_Sym);
    names = calloc(count ? count : 1, sizeof *names);
    if (!names) {
      st = cs_error(CS_ERR_NOMEM, "out of memory");
      break;
    }
    for (uint64_t k = 1; k < count; k++) { /* symbol 0 is the null symbol */
      Elf64_Sym sym;
      memcpy(&sym, file + sh.sh_offset + k * sizeof sym, sizeof sym);
      if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0) continue;
      if (sym.st_name >= strh.sh_size) {
        st = cs_error(CS_ERR_IO, "%s: symbol %llu's name outside the string table", path, (unsigned long long)k);
        break;
      }
      names[n] = strdup((const char *)file + strh.sh_offset + sym.st_name);
      if (!names[n]) {
        st = cs_error(CS_ERR_NOMEM, "out of memory");
        break;
      }
      n++;
    }
    break; /* one dynamic symbol table */
  }
  if (st == CS_OK) {
    qsort(names, (size_t)n, sizeof *names, cmp_name);
    int u = 0;
    for (int i = 0; i < n; i++) {
      if (u > 0 && !strcmp(names[u - 1], names[i])) free(names[i]);
      else names[u++] = names[i];
    }
    n = u;
  }
done:
  free(file);
  if (st != CS_OK) {
    cs_module_free_names(names, n);
    return st;
  }
  *names_out = names;
  *n_out = n;
  return CS_OK;
}
