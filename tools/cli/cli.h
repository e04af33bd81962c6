/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.h - what the files of the rfx command-line tool (tools/cli/) share:
 * the exit codes, the option ids, option tables and commands, the option
 * iterator, and the helpers of opts.c (option parsing, value parsers, help),
 * report.c (messages, exit codes, progress, output) and plot.c (gnuplot).
 * Internal to the tool, which uses only the public API of rfx.h; the
 * functions shared between its files are named cli_*.
 */
#ifndef RFX_CLI_H
#define RFX_CLI_H

#include "rfx.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF_LIKE(a, b)
#endif

/* ------------------------------------------------------------------------ */
/* Exit codes                                                                */
/* ------------------------------------------------------------------------ */

enum exit_code {
    RC_OK = 0,
    RC_USAGE = 1,
    RC_DATA = 2,
    RC_MODEL = 3,
    RC_NUMERIC = 4,
    RC_IO = 5,
    RC_INTERNAL = 6
};

/* ------------------------------------------------------------------------ */
/* Commands and option tables                                                */
/* ------------------------------------------------------------------------ */

enum opt_id {
    O_END = 0,
    O_TARGET, O_OUTPUT, O_METHOD, O_KERNEL, O_NU, O_FORM, O_FEATURES, O_SEED,
    O_LENGTH_SCALE, O_GAMMA, O_LAMBDA, O_NOISE_VAR, O_PRIOR_VAR, O_NO_STANDARDIZE,
    O_NO_INTERCEPT, O_THREADS, O_DELIMITER, O_NO_HEADER, O_STD, O_CLASSES, O_PRED,
    O_TRUTH, O_PLOT, O_POINTS, O_DIM, O_LIST, O_LIKE, O_UNIFORM, O_BOOTSTRAP,
    O_SPARSITY, O_ACTIVATION, O_WEIGHTS, O_WEIGHT_SCALE, O_ETA, O_TERMS, O_FOLDS,
    O_DEGREE, O_DEGREE_MIN, O_Q_NORM, O_MAX_INTERACTION, O_PCE_METHOD, O_NORMAL, O_LOGNORMAL,
    O_LENGTH_SCALES, O_LEARN_ITERATIONS, O_K, O_SURROGATE, O_ITERATIONS, O_PARTICLES,
    O_PATIENCE, O_THETA, O_TASK, O_LOSS, O_MULTICLASS, O_OPTIMIZER, O_CLASS_WEIGHT,
    O_PROBA, O_STRUCTURE, O_DESIGN, O_NO_SCRAMBLE, O_TRANSFORM, O_BUDGET, O_CANDIDATES,
    O_FORMAT, O_PROGRESS, O_QUIET, O_SECOND_ORDER, O_SAMPLE_WEIGHT, O_MEMORY_LIMIT, O_DISTRIBUTED, O_DETERMINISTIC, O_CHUNK_ROWS,
    O_BOX, O_DRAWS, O_REFINE_STEPS, O_UPDATE, O_FREQUENCIES, O_BASIS, O_PREDICT_DATA, O_LATENT,
    O_TEST_DATA, O_STRATEGY, O_STEP, O_MODEL_FILE, O_MAXIMIZE, O_LOWER, O_UPPER,
    O_COUNT
};

typedef struct opt_spec {
    int id;                /* enum opt_id; O_END ends a table            */
    char short_name;       /* 'o' for -o, or 0                           */
    const char *long_name; /* "target" for --target, or NULL             */
    const char *arg;       /* the value's placeholder, NULL for a flag   */
    const char *help;
} opt_spec;

typedef struct command command;
struct command {
    const char *name;
    const char *usage;   /* the synopsis lines after "Usage: "         */
    const char *summary; /* one line, for rfx --help                   */
    const char *details; /* preformatted paragraphs, or NULL           */
    const opt_spec *opts;
    int (*run)(const command *c, int argc, char **argv);
    const char *details_more; /* more paragraphs after details (a C string
                               literal has a length limit), or NULL     */
};

/* Options of several commands, for their tables. */
#define OPT_PROGRESS \
    { O_PROGRESS, 0, "progress", NULL, \
      "show progress on stderr also when it is not a terminal (a log, nohup): a line per " \
      "stage and per tenth of the work, at least 10 s apart within a tenth" }
#define OPT_QUIET \
    { O_QUIET, 'q', "quiet", NULL, \
      "no progress and no summary on stderr: errors and warnings only" }
#define OPT_DELIMITER \
    { O_DELIMITER, 0, "delimiter", "C", \
      "CSV field separator: one character, or 'tab' (default ',')" }
#define OPT_NO_HEADER \
    { O_NO_HEADER, 0, "no-header", NULL, \
      "the CSV file has no header line " \
      "(default: detected; a first line with a non-number is a header)" }
#define OPT_TARGET(what) \
    { O_TARGET, 0, "target", "COL", \
      "target column" what ": a header name, a 0-based index, " \
      "or -1 for the last column (default -1)" }

/* The commands, one per file cmd_*.c, and their table in main.c (in the
 * order of rfx --help, NULL-terminated). */
extern const command cli_fit_command, cli_predict_command, cli_eval_command, cli_info_command,
    cli_kernel_approx_command, cli_sobol_command, cli_sample_command, cli_blr_command,
    cli_kernel_sgd_command, cli_pso_command;
extern const command *const cli_commands[];

/* ------------------------------------------------------------------------ */
/* Option parsing and help (opts.c)                                          */
/* ------------------------------------------------------------------------ */

/* Special results of cli_opt_next besides option ids. */
enum { OPT_DONE = -1, OPT_ERROR = -2, OPT_POSITIONAL = -3, OPT_HELP = -4 };

/* Walks argv: "--name value", "--name=value", "-x value", "-xvalue", flags,
 * "--" (the rest are positional), and "-" (a positional). */
typedef struct opt_iter {
    const command *cmd;
    int argc;
    char **argv;
    int next;
    int only_positional;
    char name[48]; /* the spelling of the last option, for messages */
} opt_iter;

opt_iter cli_opt_begin(const command *c, int argc, char **argv);
int cli_opt_next(opt_iter *it, const char **value);

/* The most threads --threads accepts: more than any machine rfx runs on
 * has cores, and a typo such as 100000 is refused rather than started. */
#define CLI_MAX_THREADS 4096

/* The value parsers return 0, or RC_USAGE after printing why. */
int cli_parse_positive(const opt_iter *it, const char *s, double *out);
int cli_parse_nonnegative(const opt_iter *it, const char *s, double *out);
int cli_parse_size(const opt_iter *it, const char *s, size_t min, size_t *out);
/* Bytes: N, or N with K, M, G or T (powers of 1024; "2G", "512MiB"); none = 0. */
int cli_parse_bytes(const opt_iter *it, const char *s, size_t *out);
int cli_parse_seed(const opt_iter *it, const char *s, uint64_t *out);
int cli_parse_threads(const opt_iter *it, const char *s, int *out);
int cli_parse_size_list(const opt_iter *it, const char *s, size_t min, size_t *vals, size_t cap,
                        size_t *n);
int cli_parse_pair(const opt_iter *it, const char *s, double *a, double *b);
int cli_parse_kernel(const opt_iter *it, const char *s, rfx_kernel *out);
int cli_parse_form(const opt_iter *it, const char *s, rfx_form *out);
int cli_parse_structure(const opt_iter *it, const char *s, rfx_structure *out);
int cli_parse_nu(const opt_iter *it, const char *s, double *out);
int cli_parse_read_option(const opt_iter *it, int id, const char *v, rfx_read_params *rp);

/* Settings of the kernel shared by fit and kernel-approx, checked together
 * once all options are read. */
typedef struct kernel_opts {
    int have_nu, have_gamma, have_length_scale;
    double gamma;
} kernel_opts;

int cli_kernel_opts_apply(const command *c, const kernel_opts *k, rfx_features_params *fp);

int cli_print_command_help(const command *c);
void cli_print_main_usage(FILE *out);
int cli_print_main_help(void);

/* What --help and the manual page (man.c) both say. */
typedef struct cli_exit_code_doc {
    int code;
    const char *text;
} cli_exit_code_doc;
typedef struct cli_env_doc {
    const char *name, *text;
} cli_env_doc;
extern const cli_exit_code_doc cli_exit_codes[]; /* ends with text NULL */
extern const cli_env_doc cli_environment[];      /* ends with name NULL */
extern const char cli_description[];

/* The manual page rfx(1) in roff (man.c), from the same tables. */
int cli_print_man(FILE *out);

/* ------------------------------------------------------------------------ */
/* Messages, progress and output (report.c)                                  */
/* ------------------------------------------------------------------------ */

/* Messages go through cli_escape: no byte of an input (a file name, a
 * column name, an argument) can reach the terminal as a control. */
void cli_say(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* s as terminal-safe text in buf (size bytes; cut short when full): C0
 * controls, DEL, C1 controls and bytes that are not well-formed UTF-8 as
 * \xHH, the rest as is. Returns buf. */
const char *cli_escape(const char *s, char *buf, size_t size);
int cli_fail(rfx_status st);
/* The exit code of a library status (RC_DATA for RFX_EPARSE, ...). */
int cli_exit_code(rfx_status st);
int cli_usage_error(const command *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Before any work: the output path out (of -o; NULL: none) is not empty,
 * not one of the inputs, and can be written (its folder takes a new file,
 * or an existing device or FIFO is writable). RC_OK, or the exit code after
 * the message. "-" (stdout) passes. */
int cli_check_output(const command *c, const char *out, const char *const *inputs, size_t n_in);
/* Write M (with a header of names) to out_path: CSV, .npy by extension, or
 * stdout for NULL or "-". RC_OK, or the exit code after the message. */
int cli_write_output(const char *out_path, rfx_cmat M, const char *const *names);
int cli_value_error(const opt_iter *it, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Handle SIGINT, SIGTERM and SIGHUP (unless inherited as ignored): remove
 * the temporary files of the library's writes in progress and of a plot,
 * then die of the signal (exit status 128 + signo in a shell). */
void cli_interrupts_catch(void);
/* List the temporary file of a plot for the handler (NULL: none). */
void cli_interrupts_track(const char *tmp);

typedef struct progress_state {
    char stage[64];
    int percent;
    int shown;
    int lines;        /* stderr is no terminal: whole lines, fewer of them */
    double last_line; /* when the last line was written (lines only)       */
} progress_state;

double cli_now_seconds(void);
int cli_progress_show(void *user, const char *stage, double fraction);
void cli_progress_rows(progress_state *p, const char *stage, uint64_t rows, double seconds,
                       double fraction);
void cli_progress_end(const progress_state *p);

/* DATA read in row blocks (stream.c): for rfx fit (ridge, bayes) and rfx
 * predict. The reader as a row-block source that keeps the range of each
 * input over the first pass (the training box) and shows progress. */
typedef struct cli_stream cli_stream;
/* Open path (rewindable: a pipe is spooled to be read again; range: the
 * reader's range of rows, NULL for all); an error is reported and its exit
 * code returned. show: progress on stderr. */
int cli_stream_open(const char *path, const rfx_read_params *rp, const rfx_reader_params *range,
                    int rewindable, int show, cli_stream **out);
void cli_stream_free(cli_stream *s);
rfx_reader *cli_stream_reader(cli_stream *s);
rfx_source *cli_stream_source(cli_stream *s);
/* The fit's progress callback (user: the stream): its "read: ..." stages
 * name the passes, the others show as cli_progress_show. */
int cli_stream_fit_progress(void *user, const char *stage, double fraction);
/* The smallest and largest value of each input over the first pass (d
 * values each), or 0 before a pass ended. */
int cli_stream_box(const cli_stream *s, const double **lo, const double **hi);
/* Rows of the last whole pass. */
uint64_t cli_stream_rows(const cli_stream *s);
/* Show this block's progress (predict calls it; the source does for a fit). */
void cli_stream_tick(cli_stream *s);
void cli_stream_end(cli_stream *s);

#ifdef RFX_HAVE_MPI
/* rfx fit --distributed (mpi.c): MPI started, the rfx_dist handle; this
 * rank's rows opened (its byte range of DATA, or its own file when DATA
 * holds %d; whole chunks in the deterministic mode); the fit, whose model
 * every rank gets with the box of all ranks' rows; the end (MPI_Finalize,
 * or MPI_Abort when a rank stopped answering). Errors are reported and
 * their exit codes returned. */
typedef struct cli_mpi cli_mpi;
int cli_mpi_begin(int deterministic, size_t chunk_rows, double timeout, cli_mpi **out);
int cli_mpi_rank(const cli_mpi *c);
uint64_t cli_mpi_rows(const cli_mpi *c);
int cli_mpi_open(cli_mpi *c, const char *path, const rfx_read_params *rp, int show,
                  cli_stream **out);
int cli_mpi_fit(cli_mpi *c, const rfx_fit_params *fp, cli_stream *s, rfx_model **m,
                 rfx_fit_report *report);
int cli_mpi_end(cli_mpi *c, int rc);
#endif

char **cli_output_names(size_t ny, int with_std);
int cli_write_csv_stdout(rfx_cmat M, const char *const *names);
int cli_ends_with(const char *s, const char *suffix);

void cli_format_label(double v, char *buf, size_t size);
void cli_print_label_list(FILE *out, const double *v, size_t n, size_t max);
int cli_compare_doubles(const void *a, const void *b);

/* ------------------------------------------------------------------------ */
/* Reports as text or JSON, to stdout or a file (json.c)                     */
/* ------------------------------------------------------------------------ */

/* Where a report goes: stdout (path NULL or "-"), or a file made whole in
 * memory and written by rfx_write_file at close (never half a file). */
typedef struct cli_report {
    FILE *fp;         /* write the report here */
    int json;         /* --format json */
    const char *path; /* NULL: stdout */
    char *buf;
    size_t len;
} cli_report;
int cli_report_open(cli_report *r, const char *path, int json);
/* Write the file when rc is RC_OK; returns rc, or the exit code of a
 * failed write. */
int cli_report_close(cli_report *r, int rc);

/* A JSON document written as it goes: one object, members by key, arrays
 * and objects nested by json_open / json_close ('[' or '{' and the
 * matching bracket). Numbers with 17 significant digits, NaN and the
 * infinities as null; strings escaped, malformed UTF-8 as U+FFFD. */
#define JSON_MAX_DEPTH 8
typedef struct json_writer {
    FILE *fp;
    int depth;
    size_t count[JSON_MAX_DEPTH]; /* members written at each depth */
} json_writer;
void json_begin(json_writer *w, FILE *fp);
void json_end(json_writer *w);
void json_open(json_writer *w, const char *key, char bracket);
void json_close(json_writer *w, char bracket);
void json_num(json_writer *w, const char *key, double v);
void json_size(json_writer *w, const char *key, size_t v);
void json_str(json_writer *w, const char *key, const char *s);
void json_bool(json_writer *w, const char *key, int v);
void json_nums(json_writer *w, const char *key, const double *v, size_t n);
void json_string(FILE *fp, const char *s);

/* --format text|json: 0 or RC_USAGE after the message. */
int cli_parse_format(const opt_iter *it, const char *s, int *json);
#define OPT_FORMAT \
    { O_FORMAT, 0, "format", "F", \
      "text (default) or json: the report as one JSON object (shape in the help above)" }
#define OPT_REPORT_OUTPUT \
    { O_OUTPUT, 'o', "output", "OUT", "write the report to OUT instead of stdout ('-': stdout)" }

/* ------------------------------------------------------------------------ */
/* Input distributions (dists.c)                                             */
/* ------------------------------------------------------------------------ */

/* A distribution from --uniform or --normal: for one input (who, a name or
 * a 0-based index) or, who empty, for every input not given one. */
enum { CLI_MAX_DISTS = 256 };
typedef struct cli_dist {
    char who[256];
    rfx_marginal marginal;
} cli_dist;
/* "[NAME=]A,B" of --uniform (normal: "[NAME=]MU,SD" of --normal): 0 or
 * RC_USAGE after the message. */
int cli_parse_dist(const opt_iter *it, const char *v, rfx_marginal_kind kind, cli_dist *out);
/* The marginal kind of option O_UNIFORM, O_NORMAL or O_LOGNORMAL. */
rfx_marginal_kind cli_dist_kind(int option);
/* Every input's marginal (marg, d) from the specs: one without a name sets
 * every input, then each named one its input (the last wins); inputs left
 * take fallback[j] (NULL: none, a usage error naming the input). names:
 * the d input names, or NULL (indices only). RC_OK or the exit code. */
int cli_resolve_dists(const command *c, const char *const *names, size_t d,
                      const cli_dist *specs, size_t n, const rfx_marginal *fallback,
                      rfx_marginal *marg);
/* Uniform marginals on the box [lo_j, hi_j] of d inputs; a constant input
 * (lo = hi) gets [x - 1/2, x + 1/2], as the library's PCE does. */
void cli_box_marginals(const double *lo, const double *hi, size_t d, rfx_marginal *out);
/* Input j as messages and tables show it: its name (escaped), else x<j>. */
const char *cli_input_label(const char *const *names, size_t j, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* The rows a model reads (table.c)                                          */
/* ------------------------------------------------------------------------ */

/* A model's inputs from a table: X (n x d, the model's order; it may point
 * into data), and y (n) with its column's name when the table has the
 * target column. */
typedef struct model_rows {
    rfx_data *data;
    double *x, *y; /* owned: X's rows when reordered (else NULL), the target */
    rfx_cmat X;
    const char *target_name;
} model_rows;

/* Read path once and match its columns to the model's inputs
 * (rfx_model_match_columns: by name when the model and the file have names,
 * else by position; target as --target gives it, NULL for the model's).
 * need_target: a file without the target column is a data error. RC_OK,
 * or the exit code after a message naming the file and the column. */
int cli_read_model_rows(const char *path, rfx_read_params rp, const rfx_model *m,
                        const char *target, int need_target, model_rows *out);
void cli_model_rows_free(model_rows *r);
/* The same matching for a reader's columns (rfx predict reads in blocks):
 * cols (the model's d inputs) and *tc (the target's column or SIZE_MAX). */
int cli_match_reader(const char *path, rfx_reader *r, const rfx_model *m, const char *target,
                     size_t *cols, size_t *tc);
/* The model's inputs of a block T (T itself when they are its first
 * columns in order, else copied into buf, rows x d). */
rfx_cmat cli_model_inputs(rfx_cmat T, const size_t *cols, size_t d, double *buf);

/* ------------------------------------------------------------------------ */
/* Plots by gnuplot (plot.c)                                                 */
/* ------------------------------------------------------------------------ */

int cli_program_in_path(const char *name);
int cli_plot_errors(const char *path, const size_t *Ds, const double *err, size_t m,
                    const char *title);
int cli_plot_history(const char *path, const double *history, size_t n, const char *title);
int cli_plot_sobol(const char *path, const char *const *labels, size_t d, const double *first,
                   const double *first_lo, const double *first_hi, const double *total,
                   const double *total_lo, const double *total_hi, const char *title);

#endif
