/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rfx/dist.h - one fit on many machines, over MPI. Not part of rfx.h: this
 * header includes <mpi.h> and its functions live in librfx_dist (link
 * -lrfx_dist -lrfx and MPI; CMake: rfx::dist), built when CMake finds MPI
 * (option RFX_MPI). A program that uses only librfx never links MPI.
 *
 * Why this works. A ridge or Bayesian fit on D random features needs only
 * the sufficient statistics of its rows (rfx_stats: Z^T Z, Z^T y, the
 * column sums, the row count and the weight sums), and those are sums over
 * rows. So `mpirun -np K` ranks each hold their own rows, each builds the
 * same feature map from the same parameters (the map depends only on its
 * seed: W is never sent), each accumulates its rows, and the K sets of
 * statistics are added: one reduction of D (D + 1) / 2 + O(D ny) doubles,
 * whatever the number of rows. One rank then solves (rfx_ridge_solve,
 * rfx_bayes_solve) as it would on one machine. docs/SCALING.md has the
 * cost model and the measured rates.
 *
 * Two modes (rfx_dist_params.deterministic):
 *  - fast (0): each rank accumulates its rows as it likes (rfx_stats_add,
 *    rfx_stats_add_weighted, rfx_stats_add_source), then
 *    rfx_dist_stats_reduce adds the statistics with one MPI reduction. The
 *    result equals the one-process statistics of all rows to rounding
 *    (about 1e-15 relative per addition); its bits depend on the number of
 *    ranks and on how MPI orders its sums.
 *  - deterministic (1): rfx_dist_stats_add_source cuts the global rows into
 *    fixed chunks of chunk_rows rows by global row index, accumulates each
 *    chunk into its own statistics, and adds the chunks' statistics in one
 *    fixed binary tree over the chunk indices (below). The statistics, and
 *    so the model, are bitwise the same for 1, 2, 3, ... ranks and any
 *    thread count (on one instruction-set path and BLAS build: rfx/core.h's
 *    reproducibility contract).
 *
 * Collective calls. Every function below that takes an rfx_dist is
 * collective (rfx_dist_rank, rfx_dist_size and rfx_dist_free aside): every
 * rank of the communicator calls it, in the same order, with its own
 * arguments. Each call starts with a check-in at rank 0: every
 * rank sends what it is calling, its local status and the values that must
 * agree; rank 0 answers all of them with one verdict. So
 *  - a rank that failed locally (a source that could not be read, a bad
 *    argument, a cancelled progress callback) makes every rank return its
 *    status, with the message "distributed: rank R: <its message>";
 *  - ranks in different calls (a call missing on one rank) all fail with
 *    RFX_EINVAL naming the rank and both calls, instead of hanging;
 *  - a rank that does not check in within timeout_seconds makes the others
 *    fail with RFX_EIO, "distributed: no answer from rank R within T s";
 *    ranks waiting for rank 0's verdict give it 2 T before they fail with
 *    "no answer from rank 0". The handle is then unusable (every call
 *    returns that error; free it). The timeout bounds how far the ranks
 *    may drift apart between calls: set it above the slowest rank's extra
 *    time to read and accumulate its rows.
 * The data moves by blocking MPI collectives after the check-in, when every
 * rank is known to be in the call. A rank that dies (a signal, an
 * out-of-memory kill) is mpirun's to notice: Open MPI then ends the whole
 * job ("mpirun noticed that process rank R ... exited on signal 9"). The
 * library never calls MPI_Abort, exits or prints; MPI errors on its own
 * communicator return (MPI_ERRORS_RETURN) and become RFX_EIO.
 *
 * MPI: initialise it first (MPI_Init, or MPI_Init_thread with at least
 * MPI_THREAD_FUNNELED: rfx calls MPI only from the thread that calls
 * rfx_dist_*, and runs OpenMP threads in between). The ranks must share one
 * binary layout (the check-in messages are bytes). rfx_dist_create
 * duplicates the communicator, so rfx's messages never meet the program's.
 *
 * A typical fit, every rank:
 *
 *     rfx_dist *d;       rfx_dist_create(MPI_COMM_WORLD, NULL, &d);
 *     rfx_dist_agree(d, "columns", names, names_len); // the inputs, in order
 *     rfx_features_create(&fp, cols, &f);             // same fp everywhere
 *     rfx_dist_agree_features(d, f);                  // ... checked here
 *     rfx_stats_create(D, 1, &s);
 *     rfx_stats_add(s, f, X_local, Y_local);
 *     rfx_dist_stats_reduce(d, s, 0);
 *     if (rfx_dist_rank(d) == 0) rfx_ridge_solve(f, s, &rp, &model);
 */
#ifndef RFX_DIST_H
#define RFX_DIST_H

#include <mpi.h>

#include "rfx/classify.h"
#include "rfx/core.h"
#include "rfx/features.h"
#include "rfx/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rfx_dist rfx_dist;

typedef struct rfx_dist_params {
    int deterministic;      /* 0 (default): fast; 1: bitwise the same model
                               for any number of ranks (see the top)        */
    size_t chunk_rows;      /* deterministic mode: rows per chunk; 0 =
                               default 65536. Part of the result: the same
                               value gives the same bits                    */
    double timeout_seconds; /* the check-in watchdog (see the top): 0 =
                               default 120; < 0 = wait forever              */
} rfx_dist_params;

/* The defaults documented in the struct. */
RFX_API rfx_dist_params rfx_dist_params_default(void);

/* Collective over comm: duplicate it (MPI_Comm_idup, itself under the
 * watchdog), set MPI_ERRORS_RETURN on the copy, and check that every rank
 * passed the same parameters (RFX_EINVAL naming the first rank that did
 * not). params NULL: the defaults. RFX_EINVAL for a bad field (named),
 * for MPI not initialised or already finalised, or for an intercommunicator. */
RFX_API rfx_status rfx_dist_create(MPI_Comm comm, const rfx_dist_params *params,
                                   rfx_dist **out);

/* Free the handle and its communicator (MPI_Comm_free, which MPI counts
 * as collective: call it on every rank, before MPI_Finalize; it does not
 * wait for the others). NULL is a no-op. */
RFX_API void rfx_dist_free(rfx_dist *d);

/* This rank and the number of ranks (-1 and 0 for NULL). */
RFX_API int rfx_dist_rank(const rfx_dist *d);
RFX_API int rfx_dist_size(const rfx_dist *d);

/* The preflight: every rank passes its value of the named field (len
 * bytes; bytes may be NULL when len is 0): the input columns, the seed,
 * the feature parameters, D, the method's parameters. The field names
 * must match across ranks; the values are compared by length and a 64-bit
 * hash at the check-in, then byte for byte against rank 0's (one
 * broadcast of len bytes). On a difference every rank returns RFX_EINVAL
 * with the same message, naming the first rank that differs:
 * "distributed: rank 2's columns differ from rank 0's". Compare values,
 * not pointers: a struct with a pointer field (rfx_features_params's
 * length_scales) needs the pointed-to values agreed as a field of their
 * own. */
RFX_API rfx_status rfx_dist_agree(rfx_dist *d, const char *field, const void *bytes, size_t len);

/* The preflight of a feature map: d, D, the kernel, form, activation,
 * weights, structure and sparsity, and a 64-bit hash of the frequencies
 * and phases (rfx_features_frequencies, rfx_features_phases: every sampled
 * number), agreed as the field "feature map". Catches a different seed,
 * length scale or input count on a rank before any row is read. */
RFX_API rfx_status rfx_dist_agree_features(rfx_dist *d, const rfx_features *f);

/* Where this rank's rows go: the ranks' rows in rank order are the global
 * rows, so *first_row is the sum of local_rows over the lower ranks and
 * *total_rows the sum over all (one all-gather of a count per rank).
 * RFX_EOVERFLOW when the total passes 2^64 - 1. */
RFX_API rfx_status rfx_dist_row_offsets(rfx_dist *d, uint64_t local_rows, uint64_t *first_row,
                                        uint64_t *total_rows);

/* Add every rank's statistics (one MPI reduction, in either mode). The
 * ranks agree first on one target shift: the shift of the lowest rank
 * holding rows (rfx_stats_shift), broadcast; each rank packs its
 * statistics about it (rfx_stats_pack: exact re-expression) and the packed
 * vectors (rfx_stats_packed_size doubles: 8 D (D + 1) / 2 bytes and a few
 * more) are summed by MPI_Allreduce, or MPI_Reduce to root. On root (every
 * rank when root < 0) s then holds the statistics of all ranks' rows, with
 * the counts, weight sums and sum log w (the Bayesian evidence) included;
 * the other ranks' s keep their own rows. The statistics of every rank
 * must have the same D and ny (RFX_EDIM naming the first rank that
 * differs). Memory: one packed vector (4 D^2 bytes) beside s. */
RFX_API rfx_status rfx_dist_stats_reduce(rfx_dist *d, rfx_stats *s, int root);

/* Accumulate this rank's rows from src (one pass; it is rewound first)
 * and add every rank's: on root (every rank when root < 0) s then holds the
 * statistics of all ranks' rows; elsewhere it is left empty (fast mode: this
 * rank's rows). s must be empty on every rank (no rows added), with f's D
 * and the source's ny; f is the same map on every rank (see
 * rfx_dist_agree_features). progress is called after each source block
 * (fast mode) or chunk (deterministic mode) with stage "accumulate" and
 * fraction -1 (unknown); a non-zero return cancels on every rank
 * (RFX_ECANCELLED).
 *
 * Fast mode: rfx_stats_add_source, then rfx_dist_stats_reduce; first_row
 * is not used.
 *
 * Deterministic mode: this rank's source yields the global rows
 * [first_row, first_row + n_local), and the ranks' ranges tile [0, N) in
 * rank order, each non-empty range starting on a chunk boundary (a
 * multiple of chunk_rows): rfx_dist_row_offsets of a count per rank that
 * is a multiple of chunk_rows (the last rank's aside) gives such ranges.
 * This is checked at the end; a range that breaks it is RFX_EINVAL on
 * every rank, naming the rank. Chunk c holds the global rows [c chunk_rows,
 * (c + 1) chunk_rows) and c = 0 .. C - 1. Each chunk's statistics are
 * accumulated on their own (source blocks re-cut at chunk boundaries and
 * at sub-blocks of fixed size within a chunk, 2^20 / D rows within [256,
 * 4096], so the cut of the source does not matter), about their own
 * target shift, then packed about the global shift (the mean target of the
 * first sub-block of chunk 0, broadcast by its rank before accumulation). The chunks' packed statistics are added
 * in the canonical tree of aligned dyadic intervals [k 2^l, (k + 1) 2^l)
 * truncated at C: each rank keeps a stack of finished intervals and merges
 * the top two (left + right) while they are siblings, as a binary counter
 * carries; the ranks then pass their stacks down a binomial tree over the
 * ranks (rank r + 2^j to rank r) into the same stack, and rank 0 adds what
 * is left from the right. Any split of the chunks among ranks builds the
 * same intervals from the same halves, so the sums are bitwise those of
 * one process.
 *
 * Cost (deterministic): the accumulation of fast mode plus one pack of
 * D (D + 1) / 2 doubles and at most one vector addition per chunk. Memory
 * per rank: its stack, the maximal aligned intervals of its rows' chunks,
 * at most 2 log2(C) + 2 packed vectors of 4 D^2 bytes (log2(C) + 1 on rank
 * 0, whose chunks start at 0), plus one vector in flight while it receives,
 * one chunk's statistics (8 D^2 bytes) and one sub-block of rows and
 * features. On failure s is left empty or partly filled. Messages: a rank sends
 * its stack once, at most 2 log2(C) + 2 vectors, and each rank receives at
 * most log2(K) stacks (K ranks): against the fast mode's one reduction,
 * O(log C) times the volume in O(log K) steps. Rows are unweighted (an
 * rfx_block has no weights); weighted rows go through rfx_stats_add_weighted
 * and rfx_dist_stats_reduce. */
RFX_API rfx_status rfx_dist_stats_add_source(rfx_dist *d, rfx_stats *s, const rfx_features *f,
                                             rfx_source *src, uint64_t first_row, int root,
                                             rfx_progress_fn progress, void *user);

/* A classifier fitted on every rank's rows (rfx/classify.h): L-BFGS on
 * the logistic, softmax, squared hinge or squared loss, over
 * rfx_classify_fit_shard. The ranks find their labels first (one pass over
 * each source), and the classes are the union of all ranks' (a rank may
 * lack a class, or hold no rows); the class counts and the row count are
 * summed; then each L-BFGS evaluation sums the ranks' parts of the
 * objective and its gradient with one MPI_Reduce to rank 0 and one
 * MPI_Bcast (1 + D K [+ K] doubles), so that every rank gets the same bits
 * and runs the same iterations. Every rank returns the same model (*out)
 * and report.
 *
 * The parameters that shape the fit (loss, multi-class scheme, optimizer,
 * lambda, intercept, class weights, balanced, max_iter, tol) must agree
 * across ranks (RFX_EINVAL naming the first rank that differs), and so
 * must f's D and d (RFX_EDIM). params->progress is called on each rank once
 * per evaluation (stage "classify", fraction -1); a non-zero return on any
 * rank cancels on every rank. Each sum starts with a check-in, so a rank's
 * failure (its source, a label it cannot read) reaches every rank, and
 * the watchdog covers every evaluation. Errors otherwise as
 * rfx_classify_fit_shard (no hinge loss, no dual CD or SGD, no sample
 * weights). The model matches one process's rfx_classify_fit_source on all
 * rows to the optimizer's tolerance (the sums round differently). */
RFX_API rfx_status rfx_dist_classify_fit(rfx_dist *d, const rfx_features *f, rfx_source *src,
                                         const rfx_classify_params *params, rfx_model **out,
                                         rfx_classify_report *report);

/* rfx_model_fit (ridge, bayes, classify) over every rank's rows:
 * rfx_model_fit_parts (rfx/model.h) with its calls made over the handle. Each rank streams its
 * own rows from src (n_inputs columns and n_targets targets, the same on
 * every rank; a rank may hold none); the ranks first agree on the fit's
 * parameters (every field but the thread count and the progress callback:
 * a rank that differs is named, on every rank). Then, as one fit on all
 * rows would: the column means and scales, from exact sums (a long
 * accumulator per column, its integer digits summed: the same scaler
 * whatever the split); the selection rows, the select_rows rows of least
 * content hash, gathered from every rank; the length scale, chosen on
 * every rank alike; the statistics, by rfx_dist_stats_add_source in this
 * handle's mode (deterministic: src must give whole chunks, as there).
 * Every rank returns the same model; the caller writes it from one.
 * Collective. A rank whose rows fail to read makes every rank fail with
 * its message. Cost over the one-process streamed fit: per pass one
 * reduction of d x 70 integers, one gather of select_rows x (d + ny + 3)
 * doubles per rank, and the statistics' reduction. A classifier also
 * gathers every rank's labels (the classes are their union); the
 * least-squares classifier gathers up to 20000 scored rows per rank, fits
 * them on every rank when they are all the rows, else reduces the
 * statistics of its C (1 for two classes) +-1 targets, in either mode
 * (deterministic: the same model for any rank count); other
 * losses sum the objective and gradient of each L-BFGS evaluation as
 * rfx_dist_classify_fit does (one reduction and broadcast of 1 + D K
 * doubles), on top of the shared scaler, selection and choices. The
 * classify parameters that shape the fit must agree (the cache size need
 * not). The deterministic mode covers the fits from statistics (ridge,
 * bayes, the least-squares classifier: squared loss, optimizer AUTO, no
 * class weights); a handle in that mode refuses other classifiers
 * (RFX_EINVAL on every rank), whose L-BFGS sums give the same bits for one
 * rank count only. */
RFX_API rfx_status rfx_dist_model_fit_source(rfx_dist *d, const rfx_fit_params *params,
                                             rfx_source *src, size_t n_inputs, size_t n_targets,
                                             rfx_model **out, rfx_fit_report *report);

#ifdef __cplusplus
}
#endif

#endif /* RFX_DIST_H */
