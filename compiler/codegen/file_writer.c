/*
 * file_writer.c — the lib*.c files written on a second thread while the
 * next file's layers are generated.
 *
 * Creating a file costs about a millisecond on ext4 (the inode's
 * allocation, in the kernel), and a model of 100 000 layers writes some 300
 * of them: with the scan of each text for the runtime names it calls
 * (cs_runtime_files_mark) and the file's records of manifest.json
 * (cs_cg_manifest_layers), that was a third of its compile, now done on
 * another core. The texts are written in the order they are given, at most
 * QUEUE of them wait (memory stays bounded), and the first failure is the
 * error the compile reports, as if each file were written at once — which
 * is what happens when no thread can be started.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

enum { QUEUE = 4 };

typedef struct job {
  char path[4096];
  cs_sbuf text;
  int file, first, end; /* its manifest records: steps [first, end) */
} job;

struct cs_file_writer {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* a job queued, a job done, or stop */
  job q[QUEUE];
  int head, n, stop, threaded;
  pthread_t thread;
  cs_cg *cg; /* its runtime_used and manifest_layers: the writer's until cs_file_writer_finish */
  int failed;
  char error[4200]; /* the first failure */
};

/* 0, or the message of the failure in err. */
static int write_one(cs_cg *cg, job *j, char *err, size_t n) {
  if (j->text.s) cs_runtime_files_mark(j->text.s, cg->runtime_used);
  if (cg->manifest_layers && j->file >= 0)
    cs_cg_manifest_layers(cg, j->file, j->first, j->end, &cg->manifest_layers[j->file]);
  FILE *f = fopen(j->path, "wb");
  if (!f) {
    snprintf(err, n, "cannot write %s", j->path);
    return 1;
  }
  size_t wrote = fwrite(j->text.s ? j->text.s : "", 1, j->text.len, f);
  int bad = wrote != j->text.len;
  if (fclose(f) != 0) bad = 1;
  if (bad) snprintf(err, n, "cannot write %s (disk full?)", j->path);
  return bad;
}

static void *run(void *arg) {
  cs_file_writer *w = arg;
  char err[sizeof w->error];
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (!w->n && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
    if (!w->n) break;
    job *j = &w->q[w->head]; /* the producer fills other slots only */
    int skip = w->failed;
    pthread_mutex_unlock(&w->mu);
    int bad = !skip && write_one(w->cg, j, err, sizeof err);
    cs_sbuf_free(&j->text);
    pthread_mutex_lock(&w->mu);
    if (bad) {
      memcpy(w->error, err, sizeof err);
      w->failed = 1;
    }
    w->head = (w->head + 1) % QUEUE;
    w->n--;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

cs_file_writer *cs_file_writer_start(cs_cg *cg) {
  cs_file_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->cg = cg;
  if (pthread_mutex_init(&w->mu, NULL) != 0) {
    free(w);
    return NULL;
  }
  if (pthread_cond_init(&w->cv, NULL) != 0) {
    pthread_mutex_destroy(&w->mu);
    free(w);
    return NULL;
  }
  w->threaded = pthread_create(&w->thread, NULL, run, w) == 0;
  return w;
}

cs_status cs_file_writer_put(cs_file_writer *w, const char *dir, const char *name, cs_sbuf *text, int file,
                             int first, int end) {
  if (text->oom) {
    cs_sbuf_free(text);
    return cs_error(CS_ERR_NOMEM, "codegen: out of memory writing %s", name);
  }
  if (!w->threaded) {
    job j = {.file = file, .first = first, .end = end};
    snprintf(j.path, sizeof j.path, "%s/%s", dir, name);
    j.text = *text;
    memset(text, 0, sizeof *text);
    int bad = write_one(w->cg, &j, w->error, sizeof w->error);
    cs_sbuf_free(&j.text);
    return bad ? cs_error(CS_ERR_IO, "%s", w->error) : CS_OK;
  }
  pthread_mutex_lock(&w->mu);
  while (w->n == QUEUE && !w->failed) pthread_cond_wait(&w->cv, &w->mu);
  if (w->failed) {
    pthread_mutex_unlock(&w->mu);
    cs_sbuf_free(text);
    return cs_error(CS_ERR_IO, "%s", w->error);
  }
  job *j = &w->q[(w->head + w->n) % QUEUE];
  snprintf(j->path, sizeof j->path, "%s/%s", dir, name);
  j->file = file;
  j->first = first;
  j->end = end;
  j->text = *text;
  memset(text, 0, sizeof *text);
  w->n++;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return CS_OK;
}

cs_status cs_file_writer_finish(cs_file_writer *w) {
  if (!w) return CS_OK;
  if (w->threaded) {
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
  }
  cs_status st = w->failed ? cs_error(CS_ERR_IO, "%s", w->error) : CS_OK;
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
  return st;
}
