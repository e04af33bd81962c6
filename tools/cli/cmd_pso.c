/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_pso.c - rfx pso: particle swarm optimisation (rfx_pso_minimize,
 * rfx/projection.h) of a model's prediction over a box (the best inputs of
 * a surrogate), or of any program's output: PROGRAM is run once per point
 * with the point's coordinates as its last arguments and prints the value.
 */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmd_pso(const command *c, int argc, char **argv);

static const opt_spec PSO_OPTS[] = {
    { O_MODEL_FILE, 0, "model", "MODEL",
      "minimise this model's prediction (of one target) over its inputs" },
    { O_MAXIMIZE, 0, "maximize", NULL, "maximise instead of minimise" },
    { O_LOWER, 0, "lower", "A1,A2,..",
      "the box's lower bounds, one per input (default with --model: its training box)" },
    { O_UPPER, 0, "upper", "B1,B2,..", "the box's upper bounds, each > its lower bound" },
    { O_PARTICLES, 0, "particles", "N", "swarm size (default 10 + 2 sqrt(d))" },
    { O_ITERATIONS, 0, "iterations", "T", "iterations after the first evaluation (default 200)" },
    { O_PATIENCE, 0, "patience", "P",
      "stop after P iterations without improvement (default: run every iteration)" },
    { O_SEED, 0, "seed", "S", "random seed of the swarm (default 0)" },
    { O_FORMAT, 0, "format", "F",
      "text (default) or json: {value, x, iterations, evaluations, particles, history}" },
    { O_THREADS, 0, "threads", "T",
      "--model: threads of the swarm's evaluations (default 0: the OpenMP default)" },
    OPT_QUIET,
    { O_END, 0, NULL, NULL, NULL }
};

const command cli_pso_command = {
    "pso",
    "rfx pso --model MODEL [--maximize] [--lower A,.. --upper B,..] [options]\n"
    "       rfx pso --lower A,.. --upper B,.. [options] -- PROGRAM [ARGS..]",
    "minimise a model's prediction, or a program's output, by particle swarm",
    "Particle swarm optimisation (Kennedy & Eberhart 1995; the constriction\n"
    "coefficients of Clerc & Kennedy 2002, SPSO 2007's initialisation) over the\n"
    "box [lower, upper]: with --model, of the model's prediction, the box by\n"
    "default the range of its training rows (rfx info lists it); with a PROGRAM,\n"
    "of the number it prints on its standard output when run with the point's\n"
    "coordinates as its last arguments (one run per point, in order; a program\n"
    "that fails or prints no number stops the search). The swarm's random\n"
    "numbers depend only on --seed: the same run gives the same point. The best\n"
    "point and value go to stdout; the best value after each iteration with\n"
    "--format json.\n",
    PSO_OPTS, cmd_pso, NULL
};

typedef struct pso_goal {
    const rfx_model *model;
    char **argv; /* PROGRAM ARGS.. then d coordinates, then NULL */
    size_t argc;
    double sign; /* -1 to maximise */
} pso_goal;

static rfx_status model_value(void *user, const double *x, size_t d, double *value)
{
    const pso_goal *g = user;
    double y;
    rfx_status st = rfx_model_predict(g->model, rfx_cmat_of(x, 1, d), rfx_mat_of(&y, 1, 1),
                                      rfx_mat_none());
    *value = g->sign * y;
    return st;
}

/* Run the program with the coordinates and read one number from its stdout. */
static rfx_status program_value(void *user, const double *x, size_t d, double *value)
{
    const pso_goal *g = user;
    char **args = g->argv;
    char *store = malloc(d * 32);
    if (!store) return rfx_set_error(RFX_ENOMEM, "pso: out of memory for the arguments");
    for (size_t i = 0; i < d; i++) {
        snprintf(store + 32 * i, 32, "%.17g", x[i]);
        args[g->argc + i] = store + 32 * i;
    }
    args[g->argc + d] = NULL;
    int fd[2];
    rfx_status st = RFX_OK;
    if (pipe(fd) != 0) {
        free(store);
        return rfx_set_error(RFX_EIO, "pso: cannot make a pipe for the program");
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        free(store);
        return rfx_set_error(RFX_EIO, "pso: cannot start the program");
    }
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        close(fd[1]);
        execvp(args[0], args);
        _exit(127);
    }
    close(fd[1]);
    char out[256];
    size_t len = 0;
    ssize_t got;
    while ((got = read(fd[0], out + len, sizeof out - 1 - len)) > 0) {
        len += (size_t)got;
        if (len == sizeof out - 1) { /* keep the first line only; drain the rest */
            char sink[256];
            while (read(fd[0], sink, sizeof sink) > 0) {}
            break;
        }
    }
    close(fd[0]);
    out[len] = 0;
    int status = 0;
    waitpid(pid, &status, 0);
    char *end;
    double v = strtod(out, &end);
    char msg[512], q[256];
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(msg, sizeof msg, "the program %s exited with %s %d at x = (%s%s)",
                 cli_escape(args[0], q, sizeof q), WIFEXITED(status) ? "status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), args[g->argc],
                 d > 1 ? ", ..." : "");
        st = rfx_set_error(RFX_EIO, msg);
    } else if (end == out || !(isfinite(v) || isnan(v))) {
        snprintf(msg, sizeof msg, "the program %s printed no number at x = (%s%s)",
                 cli_escape(args[0], q, sizeof q), args[g->argc], d > 1 ? ", ..." : "");
        st = rfx_set_error(RFX_EPARSE, msg);
    } else {
        *value = g->sign * v;
    }
    free(store);
    return st;
}

/* A comma list of n finite numbers (n = 0: as many as given, at most cap). */
static int parse_list(const opt_iter *it, const char *s, double *out, size_t cap, size_t *n)
{
    size_t k = 0;
    const char *p = s;
    while (*p) {
        if (k == cap) return cli_value_error(it, "more than %zu values in '%s'", cap, s);
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v) || (*end && *end != ','))
            return cli_value_error(it, "'%s' is not a comma list of finite numbers", s);
        out[k++] = v;
        p = *end ? end + 1 : end;
    }
    if (k == 0) return cli_value_error(it, "no numbers in '%s'", s);
    *n = k;
    return 0;
}

enum { PSO_MAX_DIM = 1024 };

static int cmd_pso(const command *c, int argc, char **argv)
{
    rfx_pso_params pp = rfx_pso_params_default();
    const char *model_path = NULL;
    static double lower[PSO_MAX_DIM], upper[PSO_MAX_DIM];
    size_t n_lo = 0, n_hi = 0;
    int maximize = 0, json = 0, quiet = 0, n_threads = 0;
    int prog = -1; /* index of PROGRAM in argv */
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            prog = i + 1;
            break;
        }
    opt_iter it = cli_opt_begin(c, prog >= 0 ? prog - 1 : argc, argv);
    const char *v;
    int id;
    while ((id = cli_opt_next(&it, &v)) != OPT_DONE) {
        int bad = 0;
        switch (id) {
        case OPT_ERROR: return RC_USAGE;
        case OPT_HELP: return cli_print_command_help(c);
        case OPT_POSITIONAL:
            return cli_usage_error(c, "unexpected argument '%s' (a program goes after --)", v);
        case O_MODEL_FILE: model_path = v; break;
        case O_MAXIMIZE: maximize = 1; break;
        case O_LOWER: bad = parse_list(&it, v, lower, PSO_MAX_DIM, &n_lo); break;
        case O_UPPER: bad = parse_list(&it, v, upper, PSO_MAX_DIM, &n_hi); break;
        case O_PARTICLES: bad = cli_parse_size(&it, v, 1, &pp.n_particles); break;
        case O_ITERATIONS: bad = cli_parse_size(&it, v, 1, &pp.max_iter); break;
        case O_PATIENCE: bad = cli_parse_size(&it, v, 1, &pp.patience); break;
        case O_SEED: bad = cli_parse_seed(&it, v, &pp.seed); break;
        case O_FORMAT: bad = cli_parse_format(&it, v, &json); break;
        case O_THREADS: bad = cli_parse_threads(&it, v, &n_threads); break;
        case O_QUIET: quiet = 1; break;
        default: return cli_usage_error(c, "internal: unhandled option %s", it.name);
        }
        if (bad) return RC_USAGE;
    }
    if (!model_path && (prog < 0 || prog >= argc))
        return cli_usage_error(c, "give --model MODEL, or -- PROGRAM [ARGS..] to minimise");
    if (model_path && prog >= 0)
        return cli_usage_error(c, "give --model or a PROGRAM, not both");
    if (n_lo != n_hi)
        return cli_usage_error(c, "--lower has %zu values and --upper %zu", n_lo, n_hi);
    if (!model_path && n_lo == 0)
        return cli_usage_error(c, "a PROGRAM needs the box: --lower A1,.. --upper B1,..");
    for (size_t j = 0; j < n_lo; j++)
        if (!(lower[j] < upper[j]))
            return cli_usage_error(c, "input %zu: --lower %g is not below --upper %g", j, lower[j],
                                   upper[j]);

    rfx_model *model = NULL;
    pso_goal goal = { NULL, NULL, 0, maximize ? -1.0 : 1.0 };
    size_t d = n_lo;
    int rc = RC_OK;
    if (model_path) {
        rfx_status st = rfx_model_load(model_path, &model);
        if (st != RFX_OK) return cli_fail(st);
        rfx_model_info info;
        rfx_model_get_info(model, &info);
        if (info.n_targets != 1) {
            rfx_model_free(model);
            return cli_usage_error(c, "%s predicts %zu targets; pso takes one", model_path,
                                   (size_t)info.n_targets);
        }
        const double *lo, *hi;
        if (n_lo == 0) {
            if (!rfx_model_input_box(model, &lo, &hi)) {
                rfx_model_free(model);
                return cli_usage_error(c, "%s keeps no box of its inputs: give --lower and "
                                          "--upper", model_path);
            }
            d = info.n_inputs;
            if (d > PSO_MAX_DIM) {
                rfx_model_free(model);
                return cli_usage_error(c, "%zu inputs: at most %d", d, (int)PSO_MAX_DIM);
            }
            for (size_t j = 0; j < d; j++) {
                lower[j] = lo[j];
                upper[j] = hi[j] > lo[j] ? hi[j] : lo[j] + 1e-12 * fmax(1.0, fabs(lo[j]));
            }
        } else if (d != info.n_inputs) {
            rfx_model_free(model);
            return cli_usage_error(c, "the box has %zu bounds; %s takes %zu inputs", d,
                                   model_path, (size_t)info.n_inputs);
        }
        rfx_features *mf = (rfx_features *)rfx_model_features(model);
        if (mf) rfx_features_set_threads(mf, 1); /* the swarm's threads, not each call's */
        goal.model = model;
        pp.thread_safe = 1;
        pp.n_threads = n_threads;
    } else {
        goal.argc = (size_t)(argc - prog);
        if (!(goal.argv = calloc(goal.argc + d + 1, sizeof *goal.argv))) {
            cli_say("out of memory");
            return RC_INTERNAL;
        }
        for (size_t i = 0; i < goal.argc; i++) goal.argv[i] = argv[prog + (int)i];
    }
    pp.lower = lower;
    pp.upper = upper;
    const size_t iters = pp.max_iter;
    double *x = malloc(d * sizeof *x), *history = malloc((iters + 1) * sizeof *history);
    rfx_pso_report rep;
    if (!x || !history) {
        cli_say("out of memory");
        rc = RC_INTERNAL;
        goto done;
    }
    rfx_status st = rfx_pso_minimize(&pp, d, model ? model_value : program_value, &goal, x,
                                     history, &rep);
    if (st != RFX_OK) {
        rc = cli_fail(st);
        goto done;
    }
    const double best = goal.sign * rep.value;
    if (json) {
        json_writer w;
        json_begin(&w, stdout);
        json_num(&w, "value", best);
        json_nums(&w, "x", x, d);
        json_size(&w, "iterations", rep.iterations);
        json_size(&w, "evaluations", rep.evaluations);
        json_size(&w, "particles", rep.n_particles);
        for (size_t t = 0; t <= rep.iterations; t++) history[t] *= goal.sign;
        json_nums(&w, "history", history, rep.iterations + 1);
        json_end(&w);
    } else {
        printf("value %.17g\n", best);
        for (size_t j = 0; j < d; j++) {
            char q[256] = "";
            if (model && rfx_model_input_name(model, j))
                cli_escape(rfx_model_input_name(model, j), q, sizeof q);
            else
                snprintf(q, sizeof q, "x%zu", j);
            printf("%-16s %.17g\n", q, x[j]);
        }
        if (!quiet)
            fprintf(stderr, "pso              %zu particles, %zu iterations, %zu evaluations "
                            "(%s)\n", rep.n_particles, rep.iterations, rep.evaluations,
                    rep.stop == RFX_PSO_STOP_STAGNATION ? "stopped: no improvement"
                                                        : "every iteration run");
    }
done:
    rfx_model_free(model);
    free(goal.argv);
    free(x);
    free(history);
    return rc;
}
