/*
 * The per-layer profile of `cstatic run --profile`: a text table on
 * stdout, a CSV file and an SVG bar chart, all from the same rows. The
 * table and the CSV are the runtime's formatter (cstatic/profile_report.h,
 * shared with c7x_compute and Python); the SVG is plain text written here
 * (one <rect> per layer), so the report needs no plotting library and
 * opens in any browser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static double total_ms(const tidsp_profile_row *rows, int n) {
  double t = 0.0;
  for (int i = 0; i < n; i++) t += rows[i].ms;
  return t;
}

static void cut_name(char *buf, size_t size, const char *name, int width) {
  size_t len = strlen(name);
  if ((int)len <= width) {
    snprintf(buf, size, "%s", name);
  } else {
    snprintf(buf, size, "%.*s...", width - 3, name);
  }
}

void cs_profile_print(FILE *f, const tidsp_profile_row *rows, int n, double latency_ms, int with_cycles) {
  size_t need = tidsp_profile_format_table(NULL, 0, rows, n, latency_ms, with_cycles);
  char *text = malloc(need + 1);
  if (!text) {
    fputs("(out of memory for the profile table)\n", f);
    return;
  }
  tidsp_profile_format_table(text, need + 1, rows, n, latency_ms, with_cycles);
  fputs(text, f);
  free(text);
}

static cs_status close_checked(FILE *f, const char *path) {
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  return bad ? cs_error(CS_ERR_IO, "cannot write %s (disk full?)", path) : CS_OK;
}

cs_status cs_profile_write_csv(const char *path, const tidsp_profile_row *rows, int n, int with_cycles) {
  size_t need = tidsp_profile_format_csv(NULL, 0, rows, n, with_cycles);
  char *text = malloc(need + 1);
  if (!text) return cs_error(CS_ERR_NOMEM, "out of memory for the profile CSV");
  tidsp_profile_format_csv(text, need + 1, rows, n, with_cycles);
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(text);
    return cs_error(CS_ERR_IO, "cannot write the profile CSV %s", path);
  }
  fputs(text, f);
  free(text);
  return close_checked(f, path);
}

/* Text content for XML: & < > " ' escaped; control bytes dropped. */
static void xml_text(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
  }
}

/* Geometry of the chart, in SVG user units (pixels). */
enum { SVG_LABEL_W = 360, SVG_BAR_W = 480, SVG_VALUE_W = 160, SVG_ROW_H = 18, SVG_TOP = 40,
       SVG_BOTTOM = 24 };

cs_status cs_profile_write_svg(const char *path, const tidsp_profile_row *rows, int n,
                               const char *title) {
  FILE *f = fopen(path, "wb");
  if (!f) return cs_error(CS_ERR_IO, "cannot write the profile SVG %s", path);
  double total = total_ms(rows, n), longest = 0.0;
  for (int i = 0; i < n; i++)
    if (rows[i].ms > longest) longest = rows[i].ms;
  int width = SVG_LABEL_W + SVG_BAR_W + SVG_VALUE_W;
  int height = SVG_TOP + n * SVG_ROW_H + SVG_BOTTOM;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
             "viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
          width, height, width, height);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height);
  fputs("<text x=\"8\" y=\"20\" font-size=\"14\">", f);
  xml_text(f, title);
  fprintf(f, " — per-layer time, %.3f ms in %d layers</text>\n", total, n);
  for (int i = 0; i < n; i++) {
    const tidsp_profile_row *r = &rows[i];
    int y = SVG_TOP + i * SVG_ROW_H;
    double w = longest > 0 ? SVG_BAR_W * r->ms / longest : 0.0;
    char name[48];
    cut_name(name, sizeof name, r->name, 44);
    fprintf(f, "<g><title>");
    xml_text(f, r->name);
    if (r->module && *r->module) {
      fputs(" [", f);
      xml_text(f, r->module);
      fputs("]", f);
    }
    if (r->output && *r->output) {
      fputs(" → ", f);
      xml_text(f, r->output);
    }
    fprintf(f, " (%s): %.4f ms, %lld MACs</title>\n", r->kernel, r->ms, (long long)r->macs);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", SVG_LABEL_W - 6, y + SVG_ROW_H - 5);
    xml_text(f, name);
    fputs("</text>\n", f);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n", SVG_LABEL_W,
            y + 2, w, SVG_ROW_H - 4, r->macs > 0 ? "#3b75af" : "#9aa5b1");
    fprintf(f, "<text x=\"%.2f\" y=\"%d\">%.3f ms (%.1f%%)</text></g>\n", SVG_LABEL_W + w + 4,
            y + SVG_ROW_H - 5, r->ms, total > 0 ? 100.0 * r->ms / total : 0.0);
  }
  fprintf(f, "<text x=\"8\" y=\"%d\" fill=\"#555\">blue: conv/matmul (MACs); grey: other "
             "kernels</text>\n</svg>\n",
          height - 8);
  return close_checked(f, path);
}
