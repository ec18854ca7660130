/*
 * The per-layer profile of `cstatic run --profile`: a text table on
 * stdout, a CSV file and an SVG bar chart, all from the same rows. The SVG
 * is plain text written here (one <rect> per layer), so the report needs
 * no plotting library and opens in any browser.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Longest layer name shown in the table before it is cut with "...". */
enum { NAME_WIDTH_MAX = 40 };

static double total_ms(const cs_profile_row *rows, int n) {
  double t = 0.0;
  for (int i = 0; i < n; i++) t += rows[i].ms;
  return t;
}

/* MACs per second in units of 10^9, or a negative number when undefined. */
static double gmacs(const cs_profile_row *r) {
  if (r->macs <= 0 || r->ms <= 0.0) return -1.0;
  return (double)r->macs / (r->ms * 1e-3) / 1e9;
}

static void cut_name(char *buf, size_t size, const char *name, int width) {
  size_t len = strlen(name);
  if ((int)len <= width) {
    snprintf(buf, size, "%s", name);
  } else {
    snprintf(buf, size, "%.*s...", width - 3, name);
  }
}

void cs_profile_print(FILE *f, const cs_profile_row *rows, int n, double latency_ms) {
  double total = total_ms(rows, n);
  int64_t macs = 0;
  int width = 5; /* "layer" */
  for (int i = 0; i < n; i++) {
    int len = (int)strlen(rows[i].name);
    if (len > width) width = len;
    macs += rows[i].macs;
  }
  if (width > NAME_WIDTH_MAX) width = NAME_WIDTH_MAX;
  fprintf(f, "%5s  %-*s  %-22s %14s %10s %7s %8s\n", "#", width, "layer", "kernel", "MACs",
          "time_ms", "share", "GMAC/s");
  for (int i = 0; i < n; i++) {
    const cs_profile_row *r = &rows[i];
    char name[NAME_WIDTH_MAX + 1], rate[32];
    cut_name(name, sizeof name, r->name, width);
    double g = gmacs(r);
    if (g < 0) snprintf(rate, sizeof rate, "-");
    else snprintf(rate, sizeof rate, "%.2f", g);
    fprintf(f, "%5d  %-*s  %-22s %14lld %10.4f %6.1f%% %8s\n", i, width, name, r->kernel,
            (long long)r->macs, r->ms, total > 0 ? 100.0 * r->ms / total : 0.0, rate);
  }
  fprintf(f, "total: %d layers, %lld MACs, %.4f ms in layers", n, (long long)macs, total);
  if (latency_ms > 0) fprintf(f, ", %.4f ms end to end", latency_ms);
  if (total > 0 && macs > 0) fprintf(f, ", %.2f GMAC/s", (double)macs / (total * 1e-3) / 1e9);
  fputc('\n', f);
}

/* A CSV field: quoted (doubled quotes inside) when it holds , " or a newline. */
static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static cs_status close_checked(FILE *f, const char *path) {
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  return bad ? cs_error(CS_ERR_IO, "cannot write %s (disk full?)", path) : CS_OK;
}

cs_status cs_profile_write_csv(const char *path, const cs_profile_row *rows, int n) {
  FILE *f = fopen(path, "wb");
  if (!f) return cs_error(CS_ERR_IO, "cannot write the profile CSV %s", path);
  double total = total_ms(rows, n);
  fputs("index,layer,kernel,macs,time_ms,share,gmac_per_s\n", f);
  for (int i = 0; i < n; i++) {
    const cs_profile_row *r = &rows[i];
    fprintf(f, "%d,", i);
    csv_field(f, r->name);
    fputc(',', f);
    csv_field(f, r->kernel);
    double g = gmacs(r);
    fprintf(f, ",%lld,%.6f,%.6f,", (long long)r->macs, r->ms, total > 0 ? r->ms / total : 0.0);
    if (g >= 0) fprintf(f, "%.4f", g);
    fputc('\n', f);
  }
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

cs_status cs_profile_write_svg(const char *path, const cs_profile_row *rows, int n,
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
    const cs_profile_row *r = &rows[i];
    int y = SVG_TOP + i * SVG_ROW_H;
    double w = longest > 0 ? SVG_BAR_W * r->ms / longest : 0.0;
    char name[48];
    cut_name(name, sizeof name, r->name, 44);
    fprintf(f, "<g><title>");
    xml_text(f, r->name);
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
