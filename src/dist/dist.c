/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dist.c - distributed statistics over MPI (librfx_dist, rfx/dist.h): the
 * check-in that starts every collective call, the preflight, the fast
 * reduction and the deterministic chunk tree (tree.h).
 *
 * librfx_dist sits on librfx's public API only (rfx_stats_pack and
 * rfx_stats_unpack carry the statistics, rfx_set_error the messages), so
 * librfx itself never links MPI.
 */
#include "rfx/dist.h"

#include "tree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEXT 256      /* a check-in's text: a failed rank's message, a field's name */
#define VTEXT 1024    /* a verdict's message                                          */
#define NSIG 6        /* values a check-in carries for rank 0 to compare             */
#define PIECE ((size_t)1 << 22) /* doubles per MPI message (32 MiB): counts are ints */
#define MAX_NODES 130 /* intervals on a stack: at most 2 per level of a 64-bit range */

#define TRY(expr)                        \
    do {                                 \
        rfx_status st_ = (expr);         \
        if (st_ != RFX_OK) return st_;   \
    } while (0)

#if defined(__GNUC__)
#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))
#else
#define PRINTF_LIKE(a, b)
#endif

enum { TAG_GATE = 7301, TAG_VERDICT, TAG_LIST, TAG_NODE, TAG_RESULT };

/* The calls, as the check-in names them. */
enum { OP_CREATE = 1, OP_AGREE, OP_ROW_OFFSETS, OP_REDUCE, OP_SOURCE_START, OP_SOURCE_END,
       OP_CLASSIFY = 16, OP_CLASSIFY_CLASSES, OP_CLASSIFY_SUM, OP_CLASSIFY_END,
       OP_FIT_GATHER = 32, OP_FIT_SUM, OP_FIT_MAX, OP_FIT_FAILED };

static const char *op_name(int64_t op)
{
    switch (op) {
    case OP_CREATE: return "rfx_dist_create";
    case OP_AGREE: return "rfx_dist_agree";
    case OP_ROW_OFFSETS: return "rfx_dist_row_offsets";
    case OP_REDUCE: return "rfx_dist_stats_reduce";
    case OP_SOURCE_START: return "rfx_dist_stats_add_source (start)";
    case OP_SOURCE_END: return "rfx_dist_stats_add_source";
    case OP_CLASSIFY: return "rfx_dist_classify_fit";
    case OP_CLASSIFY_CLASSES: return "rfx_dist_classify_fit (classes)";
    case OP_CLASSIFY_SUM: return "rfx_dist_classify_fit (a sum)";
    case OP_CLASSIFY_END: return "rfx_dist_classify_fit (end)";
    case OP_FIT_GATHER: return "rfx_dist_model_fit_source (the selection rows)";
    case OP_FIT_SUM: return "rfx_dist_model_fit_source (column sums)";
    case OP_FIT_MAX: return "rfx_dist_model_fit_source (column magnitudes)";
    case OP_FIT_FAILED: return "rfx_dist_model_fit_source (a failure of its own)";
    }
    return "an unknown call";
}

/* What a rank sends rank 0 at the start of a call (bytes: the ranks share
 * one binary layout). */
typedef struct gate_msg {
    int64_t op, status;
    uint64_t sig[NSIG];
    char text[TEXT];
} gate_msg;

/* Rank 0's answer, the same to every rank. */
typedef struct verdict_msg {
    int64_t status; /* RFX_OK: go on */
    int64_t aux;    /* what the call needs to know (a rank), or -1 */
    int64_t broken; /* 1: the ranks are out of step; the handle is spent */
    char text[VTEXT];
} verdict_msg;

struct rfx_dist {
    MPI_Comm comm;
    int rank, size;
    rfx_dist_params p;
    double timeout; /* seconds, or < 0: no limit */
    int broken;
    rfx_status broken_status;
    char broken_text[VTEXT];
    gate_msg out;        /* this rank's check-in: lives as long as its send */
    verdict_msg verdict; /* rank 0's answer */
    gate_msg *in;        /* rank 0: every rank's check-in */
    MPI_Request *req;    /* rank 0: their receives */
    unsigned char *arrived;
};

/* Rank 0's judge of one call: every rank's check-in (all arrived, all in
 * the same call, none failed) into a status, a message and aux. */
typedef rfx_status (*judge_fn)(const rfx_dist *d, const gate_msg *in, const void *ctx,
                               int64_t *aux, char *text);

rfx_dist_params rfx_dist_params_default(void)
{
    rfx_dist_params p;
    p.deterministic = 0;
    p.chunk_rows = 65536;
    p.timeout_seconds = 0;
    return p;
}

int rfx_dist_rank(const rfx_dist *d) { return d ? d->rank : -1; }

int rfx_dist_size(const rfx_dist *d) { return d ? d->size : 0; }

/* ---- messages ----------------------------------------------------------- */

static rfx_status fail(rfx_status st, const char *fmt, ...) PRINTF_LIKE(2, 3);
static rfx_status fail(rfx_status st, const char *fmt, ...)
{
    char buf[VTEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return rfx_set_error(st, buf);
}

/* The ranks may be out of step after this: every later call fails at once. */
static rfx_status spend(rfx_dist *d, rfx_status st, const char *text)
{
    d->broken = 1;
    d->broken_status = st;
    snprintf(d->broken_text, sizeof d->broken_text, "%s", text);
    return rfx_set_error(st, text);
}

static rfx_status mpi_failed(rfx_dist *d, int rc, const char *call)
{
    char err[MPI_MAX_ERROR_STRING], text[VTEXT];
    int len = 0;
    if (MPI_Error_string(rc, err, &len) != MPI_SUCCESS) snprintf(err, sizeof err, "code %d", rc);
    snprintf(text, sizeof text, "distributed: %s failed on rank %d: %s", call, d->rank, err);
    return spend(d, RFX_EIO, text);
}

#define MPI_TRY(d, call)                                         \
    do {                                                         \
        int rc_ = (call);                                        \
        if (rc_ != MPI_SUCCESS) return mpi_failed((d), rc_, #call); \
    } while (0)

/* A field name fit for a message: printable ASCII, the rest as '?'. */
static void printable(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < size; i++)
        dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
    dst[i] = '\0';
}

/* A 64-bit hash of bytes (word by word, a multiply-xorshift mix and
 * splitmix64's finaliser): for comparing values across ranks, not for
 * adversaries. */
static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    h ^= (uint64_t)n * 0x9E3779B97F4A7C15u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    for (size_t k = 0; i < n; i++, k++) w |= (uint64_t)b[i] << (8 * k);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebu;
    return h ^ (h >> 31);
}

/* ---- the check-in ------------------------------------------------------- */

/* A pause between polls, longer as the wait grows: quick answers when the
 * ranks arrive together, an idle core when one is late. */
static void pause_after(double waited)
{
    struct timespec ts = {0, waited < 1e-3 ? 20000 : waited < 0.1 ? 200000 : 1000000};
    nanosleep(&ts, NULL);
}

static int timed_out(const rfx_dist *d, double t0, double limit)
{
    return d->timeout >= 0 && MPI_Wtime() - t0 > limit;
}

static rfx_status checkin_root(rfx_dist *d, judge_fn judge, const void *ctx, verdict_msg *v)
{
    const int P = d->size;
    const double t0 = MPI_Wtime();
    d->in[0] = d->out;
    for (int r = 1; r < P; r++) {
        d->arrived[r] = 0;
        MPI_TRY(d, MPI_Irecv(&d->in[r], (int)sizeof(gate_msg), MPI_BYTE, r, TAG_GATE, d->comm,
                             &d->req[r]));
    }
    int missing = -1;
    for (;;) {
        int all = 1;
        for (int r = 1; r < P; r++) {
            if (d->arrived[r]) continue;
            int flag = 0;
            MPI_TRY(d, MPI_Test(&d->req[r], &flag, MPI_STATUS_IGNORE));
            if (flag) d->arrived[r] = 1;
            else all = 0;
        }
        if (all) break;
        if (timed_out(d, t0, d->timeout)) {
            for (int r = 1; r < P; r++) {
                if (d->arrived[r]) continue;
                MPI_Status st;
                int cancelled = 0;
                MPI_TRY(d, MPI_Cancel(&d->req[r]));
                MPI_TRY(d, MPI_Wait(&d->req[r], &st));
                MPI_TRY(d, MPI_Test_cancelled(&st, &cancelled));
                if (!cancelled) d->arrived[r] = 1; /* just in time, but the verdict stands */
                else if (missing < 0) missing = r;
            }
            if (missing < 0) continue; /* every one arrived while cancelling */
            break;
        }
        pause_after(MPI_Wtime() - t0);
    }
    memset(v, 0, sizeof *v);
    v->aux = -1;
    if (missing >= 0) {
        v->status = RFX_EIO;
        v->broken = 1;
        snprintf(v->text, sizeof v->text, "distributed: no answer from rank %d within %g s (in %s)",
                 missing, d->timeout, op_name(d->out.op));
    } else {
        for (int r = 1; r < P && !v->status; r++)
            if (d->in[r].op != d->in[0].op) {
                v->status = RFX_EINVAL;
                snprintf(v->text, sizeof v->text,
                         "distributed: rank %d is in %s where rank 0 is in %s (every rank must make "
                         "the same calls in the same order)",
                         r, op_name(d->in[r].op), op_name(d->in[0].op));
            }
        for (int r = 0; r < P && !v->status; r++)
            if (d->in[r].status != RFX_OK) {
                char t[TEXT];
                memcpy(t, d->in[r].text, TEXT);
                t[TEXT - 1] = '\0';
                v->status = d->in[r].status;
                snprintf(v->text, sizeof v->text, "distributed: rank %d: %s", r, t);
            }
        if (!v->status && judge) v->status = judge(d, d->in, ctx, &v->aux, v->text);
    }
    for (int r = 1; r < P; r++)
        if (d->arrived[r])
            MPI_TRY(d, MPI_Isend(v, (int)sizeof *v, MPI_BYTE, r, TAG_VERDICT, d->comm, &d->req[r]));
        else
            d->req[r] = MPI_REQUEST_NULL;
    /* small messages: sent eagerly, the ranks already wait for them */
    MPI_TRY(d, MPI_Waitall(P - 1, d->req + 1, MPI_STATUSES_IGNORE));
    return RFX_OK;
}

static rfx_status checkin_other(rfx_dist *d, verdict_msg *v)
{
    MPI_Request rr, sr;
    const double t0 = MPI_Wtime(), limit = 2 * d->timeout;
    MPI_TRY(d, MPI_Irecv(v, (int)sizeof *v, MPI_BYTE, 0, TAG_VERDICT, d->comm, &rr));
    MPI_TRY(d, MPI_Isend(&d->out, (int)sizeof d->out, MPI_BYTE, 0, TAG_GATE, d->comm, &sr));
    int got = 0, sent = 0;
    for (;;) {
        if (!got) MPI_TRY(d, MPI_Test(&rr, &got, MPI_STATUS_IGNORE));
        if (!sent) MPI_TRY(d, MPI_Test(&sr, &sent, MPI_STATUS_IGNORE));
        if (got && sent) return RFX_OK;
        if (timed_out(d, t0, limit)) break;
        pause_after(MPI_Wtime() - t0);
    }
    if (!got) {
        MPI_Status st;
        int cancelled = 0;
        MPI_TRY(d, MPI_Cancel(&rr));
        MPI_TRY(d, MPI_Wait(&rr, &st));
        MPI_TRY(d, MPI_Test_cancelled(&st, &cancelled));
        got = !cancelled;
    }
    if (!sent) MPI_Request_free(&sr); /* d->out lives until rfx_dist_free */
    if (got && sent) return RFX_OK;
    memset(v, 0, sizeof *v);
    v->status = RFX_EIO;
    v->broken = 1;
    snprintf(v->text, sizeof v->text, "distributed: no answer from rank 0 within %g s (in %s)",
             limit, op_name(d->out.op));
    return RFX_OK;
}

/* Every collective call starts here: this rank's local status and the
 * values rank 0 compares (sig, text) go to rank 0, which answers every rank
 * with one verdict. RFX_OK: go on (*aux set when aux is not NULL); else
 * every rank returns the same status and message. */
static rfx_status checkin(rfx_dist *d, int op, rfx_status local, const uint64_t *sig,
                          const char *text, judge_fn judge, const void *ctx, int64_t *aux)
{
    if (d->broken)
        return fail(d->broken_status, "distributed: an earlier call failed: %s", d->broken_text);
    memset(&d->out, 0, sizeof d->out);
    d->out.op = op;
    d->out.status = local;
    if (sig) memcpy(d->out.sig, sig, sizeof d->out.sig);
    const char *t = local ? rfx_last_error() : text;
    if (t) snprintf(d->out.text, sizeof d->out.text, "%s", t);
    verdict_msg *v = &d->verdict;
    TRY(d->rank == 0 ? checkin_root(d, judge, ctx, v) : checkin_other(d, v));
    if (v->status) {
        v->text[VTEXT - 1] = '\0';
        if (v->broken) return spend(d, (rfx_status)v->status, v->text);
        return rfx_set_error((rfx_status)v->status, v->text);
    }
    if (aux) *aux = v->aux;
    return RFX_OK;
}

/* ---- the handle --------------------------------------------------------- */

static rfx_status judge_create(const rfx_dist *d, const gate_msg *in, const void *ctx,
                               int64_t *aux, char *text)
{
    (void)ctx;
    (void)aux;
    for (int r = 1; r < d->size; r++)
        if (memcmp(in[r].sig, in[0].sig, sizeof in[0].sig) != 0) {
            double t0, tr;
            memcpy(&t0, &in[0].sig[2], sizeof t0);
            memcpy(&tr, &in[r].sig[2], sizeof tr);
            snprintf(text, VTEXT,
                     "distributed: rank %d's parameters differ from rank 0's (deterministic %llu, "
                     "chunk_rows %llu, timeout_seconds %g against %llu, %llu, %g)",
                     r, (unsigned long long)in[r].sig[0], (unsigned long long)in[r].sig[1], tr,
                     (unsigned long long)in[0].sig[0], (unsigned long long)in[0].sig[1], t0);
            return RFX_EINVAL;
        }
    return RFX_OK;
}

static rfx_status check_params(const rfx_dist_params *p)
{
    if (p->deterministic != 0 && p->deterministic != 1)
        return fail(RFX_EINVAL, "dist.deterministic: must be 0 or 1, got %d", p->deterministic);
    if (isnan(p->timeout_seconds))
        return fail(RFX_EINVAL, "dist.timeout_seconds: must be a number (0 = 120 s, < 0 = no "
                                "limit), got NaN");
    return RFX_OK;
}

void rfx_dist_free(rfx_dist *d)
{
    if (!d) return;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!finalized && d->comm != MPI_COMM_NULL) MPI_Comm_free(&d->comm);
    free(d->in);
    free(d->req);
    free(d->arrived);
    free(d);
}

rfx_status rfx_dist_create(MPI_Comm comm, const rfx_dist_params *params, rfx_dist **out)
{
    int init = 0, finalized = 0, inter = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&finalized);
    if (!init || finalized)
        return fail(RFX_EINVAL, "distributed: MPI is %s (call MPI_Init before rfx_dist_create)",
                    finalized ? "finalised" : "not initialised");
    if (comm == MPI_COMM_NULL) return fail(RFX_EINVAL, "distributed: the communicator is MPI_COMM_NULL");
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return fail(RFX_EINVAL, "distributed: an intercommunicator, or not a communicator");
    rfx_dist *d = calloc(1, sizeof *d);
    if (!d) return fail(RFX_ENOMEM, "distributed: cannot allocate the handle");
    d->comm = MPI_COMM_NULL;
    d->p = params ? *params : rfx_dist_params_default();
    if (d->p.chunk_rows == 0) d->p.chunk_rows = 65536;
    d->timeout = d->p.timeout_seconds == 0 ? 120.0 : d->p.timeout_seconds;
    MPI_Comm_rank(comm, &d->rank);
    MPI_Comm_size(comm, &d->size);
    /* a local failure still takes part, so that every rank hears of it */
    rfx_status local = out ? check_params(&d->p)
                           : fail(RFX_EINVAL, "distributed: rfx_dist_create's out is NULL");
    if (d->rank == 0) {
        /* without these rank 0 cannot answer: the others' watchdogs fire */
        d->in = calloc((size_t)d->size, sizeof *d->in);
        d->req = calloc((size_t)d->size, sizeof *d->req);
        d->arrived = calloc((size_t)d->size, 1);
        if (!d->in || !d->req || !d->arrived) {
            rfx_dist_free(d);
            return fail(RFX_ENOMEM, "distributed: cannot allocate the check-in of %d ranks",
                        d->size);
        }
    }
    /* the copy lands in memory of its own: a duplication that does not
     * finish in time cannot be cancelled, and is left behind with it */
    MPI_Comm *dup = malloc(sizeof *dup);
    if (!dup) {
        rfx_dist_free(d);
        return fail(RFX_ENOMEM, "distributed: cannot allocate the handle");
    }
    MPI_Request rq;
    int rc = MPI_Comm_idup(comm, dup, &rq), done = 0;
    const double t0 = MPI_Wtime(), limit = d->timeout;
    const int rank = d->rank;
    while (rc == MPI_SUCCESS && !done) {
        rc = MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (!done && timed_out(d, t0, limit)) {
            rfx_dist_free(d);
            return fail(RFX_EIO,
                        "distributed: not every rank called rfx_dist_create within %g s (rank "
                        "%d waited)",
                        limit, rank);
        }
        if (!done) pause_after(MPI_Wtime() - t0);
    }
    if (rc != MPI_SUCCESS) {
        char err[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, err, &len);
        free(dup);
        rfx_dist_free(d);
        return fail(RFX_EIO, "distributed: MPI_Comm_idup failed: %s", err);
    }
    d->comm = *dup;
    free(dup);
    MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    uint64_t sig[NSIG] = {(uint64_t)d->p.deterministic, (uint64_t)d->p.chunk_rows};
    memcpy(&sig[2], &d->timeout, sizeof d->timeout);
    rfx_status st = checkin(d, OP_CREATE, local, sig, NULL, judge_create, NULL, NULL);
    if (st) {
        rfx_dist_free(d);
        return st;
    }
    *out = d;
    return RFX_OK;
}

/* ---- preflight ---------------------------------------------------------- */

typedef struct agree_ctx {
    const char *field;
} agree_ctx;

static rfx_status judge_agree(const rfx_dist *d, const gate_msg *in, const void *ctx,
                              int64_t *aux, char *text)
{
    (void)ctx;
    (void)aux;
    char f0[TEXT], fr[TEXT];
    printable(f0, sizeof f0, in[0].text);
    for (int r = 1; r < d->size; r++) {
        printable(fr, sizeof fr, in[r].text);
        if (in[r].sig[2] != in[0].sig[2]) {
            snprintf(text, VTEXT,
                     "distributed: rank %d agrees on '%s' where rank 0 agrees on '%s' (every "
                     "rank must make the same calls in the same order)",
                     r, fr, f0);
            return RFX_EINVAL;
        }
    }
    const size_t n = strlen(f0);
    const char *verb = n > 1 && f0[n - 1] == 's' && f0[n - 2] != 's' ? "differ" : "differs";
    for (int r = 1; r < d->size; r++)
        if (in[r].sig[0] != in[0].sig[0] || in[r].sig[1] != in[0].sig[1]) {
            if (in[r].sig[0] != in[0].sig[0])
                snprintf(text, VTEXT, "distributed: rank %d's %s %s from rank 0's (%llu bytes "
                         "against %llu)", r, f0, verb, (unsigned long long)in[r].sig[0],
                         (unsigned long long)in[0].sig[0]);
            else
                snprintf(text, VTEXT, "distributed: rank %d's %s %s from rank 0's", r, f0, verb);
            return RFX_EINVAL;
        }
    return RFX_OK;
}

static rfx_status agree(rfx_dist *d, const char *field, const void *bytes, size_t len,
                        rfx_status local)
{
    if (!local && !field) local = fail(RFX_EINVAL, "distributed: agree: field is NULL");
    if (!local && !bytes && len)
        local = fail(RFX_EINVAL, "distributed: agree: bytes is NULL with len %zu", len);
    /* rank 0's bytes come to a buffer, piece by piece */
    unsigned char *buf = NULL;
    if (!local && d->rank != 0 && len) {
        buf = malloc(len < PIECE ? len : PIECE);
        if (!buf) local = fail(RFX_ENOMEM, "distributed: agree: cannot allocate %zu bytes", len);
    }
    const char *name = field ? field : "";
    uint64_t sig[NSIG] = {(uint64_t)len, local ? 0 : hash_bytes(bytes, len, 1),
                          hash_bytes(name, strlen(name), 2)};
    char text[TEXT];
    snprintf(text, sizeof text, "%s", name);
    rfx_status st = checkin(d, OP_AGREE, local, sig, text, judge_agree, NULL, NULL);
    if (st || len == 0) {
        free(buf);
        return st;
    }
    /* the hashes agree: compare the bytes with rank 0's */
    int differs = 0, rc = MPI_SUCCESS;
    for (size_t off = 0; off < len && rc == MPI_SUCCESS; off += PIECE) {
        size_t k = len - off < PIECE ? len - off : PIECE;
        if (d->rank == 0) {
            rc = MPI_Bcast((void *)((const unsigned char *)bytes + off), (int)k, MPI_BYTE, 0,
                           d->comm);
        } else {
            rc = MPI_Bcast(buf, (int)k, MPI_BYTE, 0, d->comm);
            if (rc == MPI_SUCCESS && memcmp(buf, (const unsigned char *)bytes + off, k) != 0)
                differs = 1;
        }
    }
    free(buf);
    if (rc != MPI_SUCCESS) return mpi_failed(d, rc, "MPI_Bcast");
    int mine = differs ? d->rank : d->size, first = d->size;
    MPI_TRY(d, MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, d->comm));
    if (first < d->size) {
        char f[TEXT];
        printable(f, sizeof f, name);
        return fail(RFX_EINVAL, "distributed: rank %d's %s differ from rank 0's (same hash)",
                    first, f);
    }
    return RFX_OK;
}

rfx_status rfx_dist_agree(rfx_dist *d, const char *field, const void *bytes, size_t len)
{
    if (!d) return fail(RFX_EINVAL, "distributed: agree: the handle is NULL");
    return agree(d, field, bytes, len, RFX_OK);
}

rfx_status rfx_dist_agree_features(rfx_dist *d, const rfx_features *f)
{
    if (!d) return fail(RFX_EINVAL, "distributed: agree: the handle is NULL");
    uint64_t rec[10] = {0};
    rfx_status local = RFX_OK;
    if (!f) {
        local = fail(RFX_EINVAL, "distributed: agree_features: the feature map is NULL");
    } else {
        const rfx_features_params p = rfx_features_get_params(f);
        const rfx_cmat W = rfx_features_frequencies(f);
        const double *b = rfx_features_phases(f);
        uint64_t h = 3;
        for (size_t i = 0; i < W.rows; i++)
            h = hash_bytes(W.data + i * W.stride, W.cols * sizeof *W.data, h);
        h = hash_bytes(b, W.rows * sizeof *b, h);
        uint64_t v[10] = {rfx_features_input_dim(f), rfx_features_output_dim(f),
                          (uint64_t)p.kernel, (uint64_t)p.form, (uint64_t)p.activation,
                          (uint64_t)p.weights, (uint64_t)p.structure, (uint64_t)p.sparsity,
                          W.rows, h};
        memcpy(rec, v, sizeof rec);
    }
    return agree(d, "feature map", rec, sizeof rec, local);
}

rfx_status rfx_dist_row_offsets(rfx_dist *d, uint64_t local_rows, uint64_t *first_row,
                                uint64_t *total_rows)
{
    if (!d) return fail(RFX_EINVAL, "distributed: row_offsets: the handle is NULL");
    uint64_t *all = NULL;
    rfx_status local = RFX_OK;
    if (!first_row || !total_rows)
        local = fail(RFX_EINVAL, "distributed: row_offsets: first_row or total_rows is NULL");
    else if (!(all = malloc((size_t)d->size * sizeof *all)))
        local = fail(RFX_ENOMEM, "distributed: row_offsets: cannot allocate %d counts", d->size);
    rfx_status st = checkin(d, OP_ROW_OFFSETS, local, NULL, NULL, NULL, NULL, NULL);
    if (st) {
        free(all);
        return st;
    }
    int rc = MPI_Allgather(&local_rows, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, d->comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return mpi_failed(d, rc, "MPI_Allgather");
    }
    uint64_t before = 0, total = 0;
    for (int r = 0; r < d->size; r++) {
        if (all[r] > UINT64_MAX - total) {
            free(all);
            return fail(RFX_EOVERFLOW, "distributed: the ranks' rows pass 2^64 - 1 at rank %d", r);
        }
        if (r == d->rank) before = total;
        total += all[r];
    }
    free(all);
    *first_row = before;
    *total_rows = total;
    return RFX_OK;
}

/* ---- statistics: the fast reduction ------------------------------------- */

/* A vector of n doubles summed over the ranks, in pieces: on root, or on
 * every rank when root < 0. */
static rfx_status sum_vector(rfx_dist *d, double *v, size_t n, int root)
{
    for (size_t off = 0; off < n; off += PIECE) {
        const int k = (int)(n - off < PIECE ? n - off : PIECE);
        if (root < 0)
            MPI_TRY(d, MPI_Allreduce(MPI_IN_PLACE, v + off, k, MPI_DOUBLE, MPI_SUM, d->comm));
        else if (d->rank == root)
            MPI_TRY(d, MPI_Reduce(MPI_IN_PLACE, v + off, k, MPI_DOUBLE, MPI_SUM, root, d->comm));
        else
            MPI_TRY(d, MPI_Reduce(v + off, NULL, k, MPI_DOUBLE, MPI_SUM, root, d->comm));
    }
    return RFX_OK;
}

static rfx_status bcast_vector(rfx_dist *d, double *v, size_t n, int root)
{
    for (size_t off = 0; off < n; off += PIECE) {
        const int k = (int)(n - off < PIECE ? n - off : PIECE);
        MPI_TRY(d, MPI_Bcast(v + off, k, MPI_DOUBLE, root, d->comm));
    }
    return RFX_OK;
}

static rfx_status send_vector(rfx_dist *d, const double *v, size_t n, int to, int tag)
{
    for (size_t off = 0; off < n; off += PIECE) {
        const int k = (int)(n - off < PIECE ? n - off : PIECE);
        MPI_TRY(d, MPI_Send(v + off, k, MPI_DOUBLE, to, tag, d->comm));
    }
    return RFX_OK;
}

/* Into v, or (v NULL: no memory for it) into scratch, dropped: the ranks
 * stay in step and the failure is told after. */
static rfx_status recv_vector(rfx_dist *d, double *v, double *scratch, size_t n, int from, int tag)
{
    for (size_t off = 0; off < n; off += PIECE) {
        const int k = (int)(n - off < PIECE ? n - off : PIECE);
        MPI_TRY(d, MPI_Recv(v ? v + off : scratch, k, MPI_DOUBLE, from, tag, d->comm,
                            MPI_STATUS_IGNORE));
    }
    return RFX_OK;
}

/* sig: D, ny, rows held (0/1), root + 1 (its bits). */
static rfx_status judge_reduce(const rfx_dist *d, const gate_msg *in, const void *ctx,
                               int64_t *aux, char *text)
{
    (void)ctx;
    for (int r = 1; r < d->size; r++) {
        if (in[r].sig[0] != in[0].sig[0] || in[r].sig[1] != in[0].sig[1]) {
            snprintf(text, VTEXT,
                     "distributed: rank %d's statistics are D = %llu, ny = %llu; rank 0's D = "
                     "%llu, ny = %llu",
                     r, (unsigned long long)in[r].sig[0], (unsigned long long)in[r].sig[1],
                     (unsigned long long)in[0].sig[0], (unsigned long long)in[0].sig[1]);
            return RFX_EDIM;
        }
        if (in[r].sig[3] != in[0].sig[3]) {
            snprintf(text, VTEXT, "distributed: rank %d passed root %lld, rank 0 root %lld", r,
                     (long long)in[r].sig[3] - 1, (long long)in[0].sig[3] - 1);
            return RFX_EINVAL;
        }
    }
    *aux = -1;
    for (int r = 0; r < d->size && *aux < 0; r++)
        if (in[r].sig[2]) *aux = r;
    return RFX_OK;
}

static rfx_status check_root(const rfx_dist *d, int root)
{
    if (root >= d->size)
        return fail(RFX_EINVAL, "distributed: root %d is not a rank (%d ranks; < 0: all)", root,
                    d->size);
    return RFX_OK;
}

/* rfx_dist_stats_reduce, and the end of rfx_dist_stats_add_source in fast
 * mode (op), carrying this rank's status so far (local). */
static rfx_status reduce(rfx_dist *d, rfx_stats *s, int root, int op, rfx_status local)
{
    if (root < 0) root = -1;
    size_t L = 0, ny = 0;
    double *buf = NULL, *shift = NULL;
    if (!local && !s) local = fail(RFX_EINVAL, "distributed: the statistics are NULL");
    if (!local) local = check_root(d, root);
    if (!local) {
        L = rfx_stats_packed_size(s);
        ny = rfx_stats_n_targets(s);
        if (!L) local = fail(RFX_EOVERFLOW, "distributed: the packed statistics overflow size_t");
    }
    if (!local) {
        buf = malloc(L * sizeof *buf);
        shift = calloc(ny ? ny : 1, sizeof *shift);
        if (!buf || !shift)
            local = fail(RFX_ENOMEM, "distributed: cannot allocate %zu doubles of statistics", L);
    }
    const int holds = !local && rfx_stats_shift(s, shift);
    uint64_t sig[NSIG] = {rfx_stats_n_features(s), ny, (uint64_t)holds, (uint64_t)(root + 1)};
    int64_t from = -1;
    rfx_status st = checkin(d, op, local, sig, NULL, judge_reduce, NULL, &from);
    /* one shift for all: the first rank's that holds rows (exact
     * re-expression of the others' sums about it) */
    if (!st && from >= 0 && ny) st = bcast_vector(d, shift, ny, (int)from);
    if (!st) st = rfx_stats_pack(s, from >= 0 ? shift : NULL, buf);
    if (!st) st = sum_vector(d, buf, L, root);
    if (!st && (root < 0 || d->rank == root)) st = rfx_stats_unpack(s, buf, shift);
    free(buf);
    free(shift);
    return st;
}

rfx_status rfx_dist_stats_reduce(rfx_dist *d, rfx_stats *s, int root)
{
    if (!d) return fail(RFX_EINVAL, "distributed: stats_reduce: the handle is NULL");
    return reduce(d, s, root, OP_REDUCE, RFX_OK);
}

/* ---- statistics from a source: rows in requested counts ----------------- */

typedef struct reader {
    rfx_source *src;
    rfx_block b;
    size_t pos;    /* rows of b taken */
    size_t blocks; /* blocks read */
    int done;
    size_t d, ny;
} reader;

/* Copy up to want rows into X (want x d) and Y (want x ny): fewer only at
 * the end of the source. */
static rfx_status reader_take(reader *r, size_t want, double *X, double *Y, size_t *got)
{
    size_t n = 0;
    while (n < want && !r->done) {
        if (r->pos == r->b.rows) {
            int done = 0;
            memset(&r->b, 0, sizeof r->b);
            r->pos = 0;
            rfx_status st = r->src->next(r->src, &r->b, &done);
            if (st) {
                char msg[VTEXT];
                snprintf(msg, sizeof msg, "source block %zu: %s", r->blocks, rfx_last_error());
                return rfx_set_error(st, msg);
            }
            if (done) {
                r->done = 1;
                r->b.rows = 0;
                break;
            }
            if (r->b.rows && (r->b.cols != r->d || r->b.ny != r->ny || !r->b.x ||
                              r->b.stride < r->b.cols || (r->ny && (!r->b.y ||
                                                                    r->b.y_stride < r->ny))))
                return fail(RFX_EDIM,
                            "source block %zu has %zu columns and %zu targets (stride %zu, %zu), "
                            "the features expect %zu and the statistics %zu",
                            r->blocks, r->b.cols, r->b.ny, r->b.stride, r->b.y_stride, r->d,
                            r->ny);
            r->blocks++;
            continue;
        }
        size_t k = r->b.rows - r->pos;
        if (k > want - n) k = want - n;
        for (size_t i = 0; i < k; i++) {
            memcpy(X + (n + i) * r->d, r->b.x + (r->pos + i) * r->b.stride, r->d * sizeof *X);
            if (r->ny)
                memcpy(Y + (n + i) * r->ny, r->b.y + (r->pos + i) * r->b.y_stride,
                       r->ny * sizeof *Y);
        }
        n += k;
        r->pos += k;
    }
    *got = n;
    return RFX_OK;
}

/* The deterministic accumulation of one rank. */
typedef struct det {
    rfx_dist *d;
    const rfx_features *f;
    size_t D, ny, cols, L;
    size_t sub;      /* rows per sub-block of a chunk */
    uint64_t chunk;  /* chunk_rows */
    double *X, *Y;   /* one sub-block */
    double *shift;   /* the global shift (ny) */
    reader rd;
    rfx__tree tree;
    rfx_stats *leaf; /* the chunk being accumulated, or NULL */
    uint64_t leaf_chunk;
} det;

static void vec_add(void *user, void *left, const void *right)
{
    const size_t L = *(const size_t *)user;
    double *a = left;
    const double *b = right;
    for (size_t i = 0; i < L; i++) a[i] += b[i];
}

static void vec_free(void *user, void *v)
{
    (void)user;
    free(v);
}

/* Rows per sub-block of a chunk: 2^20 / D (8 MiB of features) within
 * [256, 4096], at most a chunk. A function of D and chunk_rows alone, since
 * the sub-blocks are part of the result's bits; features of a few MiB keep
 * the transform's output in cache for the SYRK that reads it (32 MiB
 * blocks ran 20% slower at D = 1024). */
static size_t sub_rows(size_t D, uint64_t chunk)
{
    size_t s = ((size_t)1 << 20) / D;
    if (s < 256) s = 256;
    if (s > 4096) s = 4096;
    return chunk < s ? (size_t)chunk : s;
}

/* The end of the sub-block that starts at global row g: sub-blocks are
 * cut at multiples of sub from the start of g's chunk, and at its end. */
static uint64_t sub_end(const det *t, uint64_t g)
{
    const uint64_t cs = g / t->chunk * t->chunk, ce = cs + t->chunk;
    const uint64_t e = cs + ((g - cs) / t->sub + 1) * t->sub;
    return e < ce ? e : ce;
}

/* The chunk's statistics, packed about the global shift, onto the stack. */
static rfx_status leaf_finish(det *t)
{
    if (!t->leaf) return RFX_OK;
    double *v = malloc(t->L * sizeof *v);
    rfx_status st = v ? rfx_stats_pack(t->leaf, t->ny ? t->shift : NULL, v)
                      : fail(RFX_ENOMEM, "cannot allocate a chunk's statistics (%zu doubles)", t->L);
    rfx_stats_free(t->leaf);
    t->leaf = NULL;
    if (st) {
        free(v);
        return st;
    }
    return rfx__tree_push(&t->tree, t->leaf_chunk, 0, v);
}

/* got rows of global rows [g, g + got) are in X, Y: add them to their
 * chunk's statistics. */
static rfx_status leaf_add(det *t, uint64_t g, size_t got)
{
    const uint64_t c = g / t->chunk;
    if (t->leaf && t->leaf_chunk != c) TRY(leaf_finish(t));
    if (!t->leaf) {
        TRY(rfx_stats_create(t->D, t->ny, &t->leaf));
        t->leaf_chunk = c;
    }
    rfx_cmat X = rfx_cmat_of(t->X, got, t->cols);
    rfx_cmat Y = t->ny ? rfx_cmat_of(t->Y, got, t->ny) : rfx_cmat_none();
    rfx_status st = rfx_stats_add(t->leaf, t->f, X, Y);
    if (st) {
        char msg[VTEXT];
        snprintf(msg, sizeof msg, "global rows from %llu: %s", (unsigned long long)g,
                 rfx_last_error());
        return rfx_set_error(st, msg);
    }
    return RFX_OK;
}

/* sig at the start: D, ny, d, root + 1, first_row, rows (0/1). aux: the
 * rank holding global row 0. */
static rfx_status judge_source_start(const rfx_dist *d, const gate_msg *in, const void *ctx,
                                     int64_t *aux, char *text)
{
    (void)ctx;
    for (int r = 1; r < d->size; r++) {
        if (memcmp(in[r].sig, in[0].sig, 3 * sizeof in[0].sig[0]) != 0) {
            snprintf(text, VTEXT,
                     "distributed: rank %d has D = %llu, ny = %llu, d = %llu; rank 0 D = %llu, "
                     "ny = %llu, d = %llu",
                     r, (unsigned long long)in[r].sig[0], (unsigned long long)in[r].sig[1],
                     (unsigned long long)in[r].sig[2], (unsigned long long)in[0].sig[0],
                     (unsigned long long)in[0].sig[1], (unsigned long long)in[0].sig[2]);
            return RFX_EDIM;
        }
        if (in[r].sig[3] != in[0].sig[3]) {
            snprintf(text, VTEXT, "distributed: rank %d passed root %lld, rank 0 root %lld", r,
                     (long long)in[r].sig[3] - 1, (long long)in[0].sig[3] - 1);
            return RFX_EINVAL;
        }
    }
    *aux = -1;
    for (int r = 0; r < d->size && *aux < 0; r++)
        if (in[r].sig[4] == 0 && in[r].sig[5]) *aux = r;
    return RFX_OK;
}

/* sig at the end: first_row, rows. The ranges must tile [0, N) in rank
 * order, each non-empty one from a chunk boundary. */
static rfx_status judge_source_end(const rfx_dist *d, const gate_msg *in, const void *ctx,
                                   int64_t *aux, char *text)
{
    (void)ctx;
    const uint64_t chunk = d->p.chunk_rows;
    uint64_t next = 0;
    int prev = -1;
    for (int r = 0; r < d->size; r++) {
        const uint64_t a = in[r].sig[0], n = in[r].sig[1];
        if (n == 0) continue;
        if (a != next) {
            if (prev < 0)
                snprintf(text, VTEXT,
                         "distributed: rank %d's rows start at global row %llu, but no rank "
                         "before it has rows (the ranks' rows must tile [0, N) in rank order)",
                         r, (unsigned long long)a);
            else
                snprintf(text, VTEXT,
                         "distributed: rank %d's rows start at global row %llu, but rank %d's end "
                         "at %llu (the ranks' rows must tile [0, N) in rank order)",
                         r, (unsigned long long)a, prev, (unsigned long long)next);
            return RFX_EINVAL;
        }
        if (a % chunk) {
            snprintf(text, VTEXT,
                     "distributed: rank %d's rows start at global row %llu, not on a chunk "
                     "boundary (a multiple of chunk_rows = %llu)",
                     r, (unsigned long long)a, (unsigned long long)chunk);
            return RFX_EINVAL;
        }
        if (n > UINT64_MAX - a) {
            snprintf(text, VTEXT, "distributed: rank %d's rows pass global row 2^64 - 1", r);
            return RFX_EOVERFLOW;
        }
        next = a + n;
        prev = r;
    }
    *aux = next > 0; /* rows to add */
    return RFX_OK;
}

/* The ranks' stacks down a binomial tree: rank r + 2^j sends its stack to
 * rank r (r a multiple of 2^(j+1)), which pushes it onto its own. A rank
 * that cannot allocate an incoming vector drains it into scratch and tells
 * at the end (*failed). */
static rfx_status pass_stacks(det *t, double *scratch, int *failed)
{
    rfx_dist *d = t->d;
    const int P = d->size, rank = d->rank;
    uint64_t hdr[2 * MAX_NODES];
    for (int step = 1; step < P; step *= 2) {
        if (rank % (2 * step) == step) {
            const rfx__tree *tr = &t->tree;
            uint64_t n = tr->n;
            if (n > MAX_NODES) return fail(RFX_EINTERNAL, "distributed: a stack of %zu intervals", tr->n);
            for (size_t i = 0; i < tr->n; i++) {
                hdr[2 * i] = tr->node[i].start;
                hdr[2 * i + 1] = tr->node[i].level;
            }
            /* the count, the intervals, then their vectors */
            MPI_TRY(d, MPI_Send(&n, 1, MPI_UINT64_T, rank - step, TAG_LIST, d->comm));
            if (n)
                MPI_TRY(d, MPI_Send(hdr, (int)(2 * n), MPI_UINT64_T, rank - step, TAG_LIST, d->comm));
            for (size_t i = 0; i < tr->n; i++)
                TRY(send_vector(d, tr->node[i].value, t->L, rank - step, TAG_NODE));
            rfx__tree_free(&t->tree);
            return RFX_OK;
        }
        if (rank % (2 * step) == 0 && rank + step < P) {
            const int from = rank + step;
            uint64_t n = 0;
            MPI_TRY(d, MPI_Recv(&n, 1, MPI_UINT64_T, from, TAG_LIST, d->comm, MPI_STATUS_IGNORE));
            if (n > MAX_NODES) return fail(RFX_EINTERNAL, "distributed: a stack of %llu intervals",
                                           (unsigned long long)n);
            if (n)
                MPI_TRY(d, MPI_Recv(hdr, (int)(2 * n), MPI_UINT64_T, from, TAG_LIST, d->comm,
                                    MPI_STATUS_IGNORE));
            for (uint64_t i = 0; i < n; i++) {
                double *v = *failed ? NULL : malloc(t->L * sizeof *v);
                if (!v) *failed = 1;
                TRY(recv_vector(d, v, scratch, t->L, from, TAG_NODE));
                if (v && rfx__tree_push(&t->tree, hdr[2 * i], (unsigned)hdr[2 * i + 1], v))
                    *failed = 1;
            }
        }
    }
    return RFX_OK;
}

static int receives_stacks(const rfx_dist *d)
{
    for (int step = 1; step < d->size; step *= 2) {
        if (d->rank % (2 * step) == step) return 0;
        if (d->rank + step < d->size) return 1;
    }
    return 0;
}

static rfx_status source_deterministic(rfx_dist *d, rfx_stats *s, const rfx_features *f,
                                       rfx_source *src, uint64_t first_row, int root,
                                       rfx_progress_fn progress, void *user, rfx_status local)
{
    det t;
    memset(&t, 0, sizeof t);
    t.d = d;
    t.f = f;
    t.chunk = d->p.chunk_rows;
    rfx__tree_init(&t.tree, vec_add, vec_free, &t.L);
    double *scratch = NULL, *result = NULL;
    if (!local) local = check_root(d, root);
    if (!local) {
        t.D = rfx_stats_n_features(s);
        t.ny = rfx_stats_n_targets(s);
        t.cols = rfx_features_input_dim(f);
        t.L = rfx_stats_packed_size(s);
        t.sub = sub_rows(t.D, t.chunk);
        t.X = malloc(t.sub * t.cols * sizeof *t.X);
        t.Y = malloc((t.ny ? t.sub * t.ny : 1) * sizeof *t.Y);
        t.shift = calloc(t.ny ? t.ny : 1, sizeof *t.shift);
        if (!t.L)
            local = fail(RFX_EOVERFLOW, "distributed: the packed statistics overflow size_t");
        else if (!t.X || !t.Y || !t.shift)
            local = fail(RFX_ENOMEM, "distributed: cannot allocate a sub-block of %zu rows", t.sub);
        t.rd.src = src;
        t.rd.d = t.cols;
        t.rd.ny = t.ny;
    }
    if (!local) {
        local = src->rewind(src);
        if (local) {
            char msg[VTEXT];
            snprintf(msg, sizeof msg, "source rewind: %s", rfx_last_error());
            rfx_set_error(local, msg);
        }
    }
    /* the first sub-block before the check-in: the rank holding global row
     * 0 gives the shift from it */
    uint64_t g = first_row, n_local = 0;
    size_t got = 0;
    if (!local) local = reader_take(&t.rd, (size_t)(sub_end(&t, g) - g), t.X, t.Y, &got);
    uint64_t sig[NSIG] = {t.D, t.ny, t.cols, (uint64_t)(root + 1), first_row, got > 0};
    int64_t owner = -1, any = 0;
    rfx_status st = checkin(d, OP_SOURCE_START, local, sig, NULL, judge_source_start, NULL, &owner);
    if (st) goto done;
    if (owner >= 0 && t.ny) {
        if (d->rank == owner)
            for (size_t k = 0; k < t.ny; k++) {
                double m = 0;
                for (size_t i = 0; i < got; i++) m += t.Y[i * t.ny + k];
                t.shift[k] = m / (double)got;
            }
        if ((st = bcast_vector(d, t.shift, t.ny, (int)owner))) goto done;
    }
    while (got > 0 && !local) {
        local = leaf_add(&t, g, got);
        if (local) break;
        g += got;
        n_local += got;
        if (g % t.chunk == 0) {
            local = leaf_finish(&t);
            if (!local && progress && progress(user, "accumulate", -1.0))
                local = fail(RFX_ECANCELLED, "cancelled by the progress callback");
            if (local) break;
        }
        local = reader_take(&t.rd, (size_t)(sub_end(&t, g) - g), t.X, t.Y, &got);
    }
    if (!local) local = leaf_finish(&t); /* a last chunk cut short */
    /* what the exchange needs, allocated before the check-in that starts it */
    if (!local && receives_stacks(d)) {
        scratch = malloc((t.L < PIECE ? t.L : PIECE) * sizeof *scratch);
        if (!scratch) local = fail(RFX_ENOMEM, "distributed: cannot allocate a receive buffer");
    }
    if (!local && ((root < 0 && d->rank != 0) || (root > 0 && d->rank == root))) {
        result = malloc(t.L * sizeof *result);
        if (!result) local = fail(RFX_ENOMEM, "distributed: cannot allocate the statistics (%zu "
                                              "doubles)", t.L);
    }
    uint64_t sig_end[NSIG] = {first_row, n_local};
    st = checkin(d, OP_SOURCE_END, local, sig_end, NULL, judge_source_end, NULL, &any);
    if (st) goto done;
    int failed = 0, mine, first;
    if ((st = pass_stacks(&t, scratch, &failed))) goto done;
    mine = failed ? d->rank : d->size;
    int rc = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, d->comm);
    if (rc != MPI_SUCCESS) {
        st = mpi_failed(d, rc, "MPI_Allreduce");
        goto done;
    }
    if (first < d->size) {
        st = fail(RFX_ENOMEM, "distributed: rank %d ran out of memory adding the chunks' "
                              "statistics", first);
        goto done;
    }
    if (!any) goto done; /* no rows anywhere: s stays empty */
    if (d->rank == 0) {
        free(result);
        result = rfx__tree_fold(&t.tree);
    }
    if (root > 0 && d->rank == 0) st = send_vector(d, result, t.L, root, TAG_RESULT);
    else if (root > 0 && d->rank == root) st = recv_vector(d, result, NULL, t.L, 0, TAG_RESULT);
    else if (root < 0) st = bcast_vector(d, result, t.L, 0);
    if (!st && (root < 0 || d->rank == root)) st = rfx_stats_unpack(s, result, t.shift);
done:
    rfx_stats_free(t.leaf);
    rfx__tree_free(&t.tree);
    free(t.X);
    free(t.Y);
    free(t.shift);
    free(scratch);
    free(result);
    return st;
}

rfx_status rfx_dist_stats_add_source(rfx_dist *d, rfx_stats *s, const rfx_features *f,
                                     rfx_source *src, uint64_t first_row, int root,
                                     rfx_progress_fn progress, void *user)
{
    if (!d) return fail(RFX_EINVAL, "distributed: stats_add_source: the handle is NULL");
    if (root < 0) root = -1;
    rfx_status local = RFX_OK;
    if (!s || !f || !src || !src->next || !src->rewind)
        local = fail(RFX_EINVAL, "distributed: stats_add_source: NULL statistics, features or "
                                 "source (or a source without next or rewind)");
    else if (rfx_stats_rows(s) || rfx_stats_shift(s, NULL))
        local = fail(RFX_EINVAL, "distributed: stats_add_source: the statistics must be empty "
                                 "(they hold %zu rows)", rfx_stats_rows(s));
    else if (rfx_features_output_dim(f) != rfx_stats_n_features(s))
        local = fail(RFX_EDIM, "distributed: the features have %zu outputs, the statistics %zu",
                     rfx_features_output_dim(f), rfx_stats_n_features(s));
    if (d->p.deterministic)
        return source_deterministic(d, s, f, src, first_row, root, progress, user, local);
    if (!local) local = rfx_stats_add_source(s, f, src, progress, user);
    return reduce(d, local ? NULL : s, root, OP_SOURCE_END, local);
}

/* ---- classification: one L-BFGS over every rank's rows ----------------- */


/* This rank's distinct labels, sorted: one pass over the source. */
static rfx_status local_classes(rfx_source *src, double **out, size_t *k)
{
    double *set = NULL;
    size_t n = 0, rows = 0;
    rfx_status st = src->rewind(src);
    while (!st) {
        rfx_block b;
        int end = 0;
        memset(&b, 0, sizeof b);
        if ((st = src->next(src, &b, &end)) || end) break;
        if (b.rows == 0) continue;
        if (b.ny != 1 || !b.y) {
            st = fail(RFX_EDIM, "classify source: rows %zu.. have %zu target columns, expected 1 "
                      "(the labels)", rows, b.ny);
            break;
        }
        double *bc = NULL;
        size_t bk = 0;
        if ((st = rfx_classes_find(b.y, b.rows, b.y_stride, &bc, &bk))) break;
        /* merge two sorted sets */
        double *m = malloc((n + bk) * sizeof *m);
        size_t i = 0, j = 0, o = 0;
        if (!m) st = fail(RFX_ENOMEM, "classify: cannot allocate %zu labels", n + bk);
        while (m && (i < n || j < bk)) {
            if (j == bk || (i < n && set[i] < bc[j])) m[o++] = set[i++];
            else if (i == n || bc[j] < set[i]) m[o++] = bc[j++];
            else {
                m[o++] = set[i++];
                j++;
            }
        }
        rfx_buffer_free(bc);
        free(set);
        set = m;
        n = o;
        rows += b.rows;
        if (!st && n > RFX_CLASSIFY_MAX_CLASSES)
            st = fail(RFX_EINVAL, "classify source: more than %d distinct labels (are these class "
                      "labels?)", RFX_CLASSIFY_MAX_CLASSES);
    }
    if (st) {
        free(set);
        return st;
    }
    *out = set;
    *k = n;
    return RFX_OK;
}

/* The classification parameters that must agree, as one record: the
 * fields that shape the objective and the iterations (not the threads, the
 * cache or the callbacks). */
static uint64_t params_hash(const rfx_classify_params *p)
{
    double v[8] = {(double)p->loss, (double)p->multiclass, (double)p->optimizer, p->lambda,
                   (double)p->fit_intercept, (double)p->balanced, (double)p->max_iter, p->tol};
    uint64_t h = hash_bytes(v, sizeof v, 5);
    h = hash_bytes(&p->n_class_weights, sizeof p->n_class_weights, h);
    if (p->class_weights)
        h = hash_bytes(p->class_weights, p->n_class_weights * sizeof *p->class_weights, h);
    return hash_bytes(&(int){p->sample_weight != NULL}, sizeof(int), h);
}

/* sig: D, d, local classes, the parameters' hash. aux: the classes of all
 * ranks, counted with repeats (the gather's size). */
static rfx_status judge_classify(const rfx_dist *d, const gate_msg *in, const void *ctx,
                                 int64_t *aux, char *text)
{
    (void)ctx;
    uint64_t total = 0;
    for (int r = 0; r < d->size; r++) {
        if (r && (in[r].sig[0] != in[0].sig[0] || in[r].sig[1] != in[0].sig[1])) {
            snprintf(text, VTEXT,
                     "distributed: rank %d's feature map has D = %llu, d = %llu; rank 0's D = "
                     "%llu, d = %llu",
                     r, (unsigned long long)in[r].sig[0], (unsigned long long)in[r].sig[1],
                     (unsigned long long)in[0].sig[0], (unsigned long long)in[0].sig[1]);
            return RFX_EDIM;
        }
        if (r && in[r].sig[3] != in[0].sig[3]) {
            snprintf(text, VTEXT, "distributed: rank %d's classification parameters differ from "
                     "rank 0's", r);
            return RFX_EINVAL;
        }
        total += in[r].sig[2];
    }
    *aux = (int64_t)total;
    return RFX_OK;
}

/* sig: the count to sum. */
static rfx_status judge_sum(const rfx_dist *d, const gate_msg *in, const void *ctx, int64_t *aux,
                            char *text)
{
    (void)ctx;
    (void)aux;
    for (int r = 1; r < d->size; r++)
        if (in[r].sig[0] != in[0].sig[0]) {
            snprintf(text, VTEXT, "distributed: rank %d sums %llu values where rank 0 sums %llu "
                     "(the ranks' iterations parted)", r, (unsigned long long)in[r].sig[0],
                     (unsigned long long)in[0].sig[0]);
            return RFX_EINTERNAL;
        }
    return RFX_OK;
}

typedef struct classify_ctx {
    rfx_dist *d;
    rfx_progress_fn progress;
    void *user;
    int failed; /* a sum failed: on every rank alike */
} classify_ctx;

/* rfx_classify_fit_shard's sum: a check-in (every rank's status, the
 * user's progress and cancel), then MPI_Reduce to rank 0 and MPI_Bcast, so
 * that every rank gets the same bits. */
static rfx_status classify_sum(void *user, double *v, size_t n, rfx_status local)
{
    classify_ctx *c = user;
    if (!local && c->progress && c->progress(c->user, "classify", -1.0))
        local = fail(RFX_ECANCELLED, "cancelled by the progress callback");
    uint64_t sig[NSIG] = {(uint64_t)n};
    rfx_status st = checkin(c->d, OP_CLASSIFY_SUM, local, sig, NULL, judge_sum, NULL, NULL);
    if (!st) st = sum_vector(c->d, v, n, 0);
    if (!st) st = bcast_vector(c->d, v, n, 0);
    if (st) c->failed = 1;
    return st;
}

rfx_status rfx_dist_classify_fit(rfx_dist *d, const rfx_features *f, rfx_source *src,
                                 const rfx_classify_params *params, rfx_model **out,
                                 rfx_classify_report *report)
{
    if (!d) return fail(RFX_EINVAL, "distributed: classify_fit: the handle is NULL");
    rfx_status local = RFX_OK;
    double *mine = NULL, *all = NULL, *classes = NULL;
    int *counts = NULL, *displs = NULL;
    size_t k = 0, C = 0;
    if (!f || !src || !src->next || !src->rewind || !params || !out)
        local = fail(RFX_EINVAL, "distributed: classify_fit: NULL features, source, params or "
                                 "out (or a source without next or rewind)");
    if (!local) local = rfx_classify_params_check(params);
    if (!local) local = local_classes(src, &mine, &k);
    uint64_t sig[NSIG] = {f ? rfx_features_output_dim(f) : 0, f ? rfx_features_input_dim(f) : 0,
                          k, params ? params_hash(params) : 0};
    int64_t total = 0;
    rfx_status st = checkin(d, OP_CLASSIFY, local, sig, NULL, judge_classify, NULL, &total);
    if (st) goto done;
    /* every rank's classes, then their union */
    all = malloc(((size_t)total ? (size_t)total : 1) * sizeof *all);
    counts = malloc((size_t)d->size * sizeof *counts);
    displs = malloc((size_t)d->size * sizeof *displs);
    local = all && counts && displs && total <= INT32_MAX
                ? RFX_OK
                : fail(RFX_ENOMEM, "distributed: cannot gather %lld labels", (long long)total);
    if ((st = checkin(d, OP_CLASSIFY_CLASSES, local, NULL, NULL, NULL, NULL, NULL))) goto done;
    int kk = (int)k, rc = MPI_Allgather(&kk, 1, MPI_INT, counts, 1, MPI_INT, d->comm);
    for (int r = 0, o = 0; rc == MPI_SUCCESS && r < d->size; o += counts[r++]) displs[r] = o;
    if (rc == MPI_SUCCESS)
        rc = MPI_Allgatherv(mine, kk, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, d->comm);
    if (rc != MPI_SUCCESS) {
        st = mpi_failed(d, rc, "MPI_Allgatherv");
        goto done;
    }
    classify_ctx ctx = {d, params->progress, params->progress_user, 0};
    /* the union, on every rank alike: rfx_classes_find sorts and dedups */
    if ((st = rfx_classes_find(all, (size_t)total, 1, &classes, &C))) {
        /* this rank alone (no memory): the others wait in the first sum */
        double none = 0;
        st = classify_sum(&ctx, &none, 1, st);
        goto done;
    }
    if (C < 2 || C > RFX_CLASSIFY_MAX_CLASSES) {
        st = fail(RFX_EINVAL, "distributed: the ranks' labels hold %zu classes (2 to %d are "
                  "needed)", C, RFX_CLASSIFY_MAX_CLASSES);
        goto done;
    }
    rfx_classify_shard shard = {classes, C, classify_sum, &ctx};
    rfx_model *m = NULL;
    st = rfx_classify_fit_shard(f, src, params, &shard, &m, report);
    /* a failure of a sum reached every rank; any other is this rank's
     * alone (after the last sum): one more check-in tells the others */
    if (!ctx.failed) {
        rfx_status end = checkin(d, OP_CLASSIFY_END, st, NULL, NULL, NULL, NULL, NULL);
        if (end) st = end;
    }
    if (st) rfx_model_free(m);
    else *out = m;
done:
    free(mine);
    free(all);
    free(counts);
    free(displs);
    rfx_buffer_free(classes);
    return st;
}

/* ---- one fit over the ranks: rfx_dist_model_fit_source ------------------ */

/* The fit's calls (rfx_fit_parts) over the handle: each a check-in, then one
 * MPI collective. */
typedef struct fit_ctx {
    rfx_dist *d;
    rfx_progress_fn progress;
    void *user;
} fit_ctx;

/* sig[0]: the count every rank passes. */
static rfx_status judge_count(const rfx_dist *d, const gate_msg *in, const void *ctx,
                              int64_t *aux, char *text)
{
    (void)ctx;
    (void)aux;
    for (int r = 1; r < d->size; r++)
        if (in[r].sig[0] != in[0].sig[0]) {
            snprintf(text, VTEXT, "distributed: rank %d passes %llu values, rank 0 %llu", r,
                     (unsigned long long)in[r].sig[0], (unsigned long long)in[0].sig[0]);
            return RFX_EDIM;
        }
    return RFX_OK;
}

static rfx_status fit_offsets(void *u, uint64_t rows, uint64_t *first, uint64_t *total)
{
    fit_ctx *c = u;
    return rfx_dist_row_offsets(c->d, rows, first, total);
}

static rfx_status fit_gather(void *u, const double *mine, size_t n, double *all)
{
    fit_ctx *c = u;
    rfx_dist *d = c->d;
    const uint64_t sig[NSIG] = {n};
    const size_t piece = n < PIECE ? n : PIECE;
    double *tmp = malloc((piece ? piece : 1) * (size_t)d->size * sizeof *tmp);
    rfx_status local = tmp ? RFX_OK : fail(RFX_ENOMEM, "distributed: cannot allocate a gather");
    rfx_status st = checkin(d, OP_FIT_GATHER, local, sig, NULL, judge_count, NULL, NULL);
    for (size_t off = 0; off < n && !st; off += PIECE) {
        const int k = (int)(n - off < PIECE ? n - off : PIECE);
        int rc = MPI_Allgather(mine + off, k, MPI_DOUBLE, tmp, k, MPI_DOUBLE, d->comm);
        if (rc != MPI_SUCCESS) {
            st = mpi_failed(d, rc, "MPI_Allgather");
            break;
        }
        for (int r = 0; r < d->size; r++)
            memcpy(all + (size_t)r * n + off, tmp + (size_t)r * (size_t)k, (size_t)k * sizeof *tmp);
    }
    free(tmp);
    return st;
}

static rfx_status fit_allreduce(fit_ctx *c, void *v, size_t n, MPI_Datatype type, MPI_Op op,
                                int opcode)
{
    rfx_dist *d = c->d;
    const uint64_t sig[NSIG] = {n};
    TRY(checkin(d, opcode, RFX_OK, sig, NULL, judge_count, NULL, NULL));
    for (size_t off = 0; off < n; off += PIECE) {
        const int k = (int)(n - off < PIECE ? n - off : PIECE);
        char *p = (char *)v + off * 8; /* int64 and double: 8 bytes */
        MPI_TRY(d, MPI_Allreduce(MPI_IN_PLACE, p, k, type, op, d->comm));
    }
    return RFX_OK;
}

static rfx_status fit_sum_exact(void *u, int64_t *v, size_t n)
{
    return fit_allreduce(u, v, n, MPI_INT64_T, MPI_SUM, OP_FIT_SUM);
}

static rfx_status fit_max(void *u, double *v, size_t n)
{
    return fit_allreduce(u, v, n, MPI_DOUBLE, MPI_MAX, OP_FIT_MAX);
}

static rfx_status fit_stats(void *u, rfx_stats *s, const rfx_features *f, rfx_source *src,
                            uint64_t first_row)
{
    fit_ctx *c = u;
    TRY(rfx_dist_agree_features(c->d, f));
    return rfx_dist_stats_add_source(c->d, s, f, src, first_row, -1, c->progress, c->user);
}

/* A classifier's sums (rfx_fit_parts.sum): rfx_classify_fit_shard's, as
 * rfx_dist_classify_fit makes them. */
static rfx_status fit_sum(void *u, double *v, size_t n, rfx_status local)
{
    fit_ctx *c = u;
    classify_ctx cc = {c->d, c->progress, c->user, 0};
    return classify_sum(&cc, v, n, local);
}

static void fit_fail(void *u, rfx_status status)
{
    fit_ctx *c = u;
    (void)checkin(c->d, OP_FIT_FAILED, status, NULL, NULL, NULL, NULL, NULL);
}

/* A fit's classifier settings: *p->classify, or without them the default
 * classifier, RFX_LOSS_AUTO (rfx/model.h). */
static rfx_classify_params classify_given(const rfx_fit_params *p)
{
    if (p->classify) return *p->classify;
    rfx_classify_params cp = rfx_classify_params_default();
    cp.loss = RFX_LOSS_AUTO;
    return cp;
}

/* The parameters every rank must share, field by field (no pointers, no
 * padding, no thread count). */
static size_t fit_record(const rfx_fit_params *p, double *rec)
{
    const rfx_features_params *f = &p->features;
    size_t k = 0;
    rec[k++] = p->method;
    rec[k++] = f->kernel;
    rec[k++] = f->nu;
    rec[k++] = f->form;
    rec[k++] = (double)f->n_features;
    rec[k++] = (double)(f->seed >> 32);
    rec[k++] = (double)(f->seed & 0xffffffffu);
    rec[k++] = f->length_scale;
    rec[k++] = f->length_scales != NULL;
    rec[k++] = f->gamma;
    rec[k++] = f->activation;
    rec[k++] = (double)f->sparsity;
    rec[k++] = f->weights;
    rec[k++] = f->weight_scale;
    rec[k++] = f->structure;
    rec[k++] = f->structure_version;
    rec[k++] = f->spectral != NULL; /* a sampler's draws: rfx_dist_agree_features' hash */
    rec[k++] = p->standardize;
    rec[k++] = p->lambda;
    rec[k++] = p->noise_var;
    rec[k++] = p->prior_var;
    rec[k++] = p->fit_intercept;
    rec[k++] = (double)p->select_rows;
    rec[k++] = p->learn_length_scales;
    rec[k++] = (double)p->learn_iterations;
    rec[k++] = (double)p->learn_particles;
    if (p->method == RFX_METHOD_CLASSIFY) {
        const rfx_classify_params cp = classify_given(p);
        rec[k++] = (double)p->classify_folds;
        rec[k++] = (double)params_hash(&cp); /* loss .. tol, the class weights */
        rec[k++] = (double)cp.epochs;
        rec[k++] = (double)cp.batch_size;
        rec[k++] = cp.learning_rate;
        rec[k++] = (double)(cp.seed >> 32);
        rec[k++] = (double)(cp.seed & 0xffffffffu);
        /* not the cache: each rank's own memory (the sums are broadcast) */
    }
    return k;
}

rfx_status rfx_dist_model_fit_source(rfx_dist *d, const rfx_fit_params *params, rfx_source *src,
                                     size_t n_inputs, size_t n_targets, rfx_model **out,
                                     rfx_fit_report *report)
{
    if (!d) return fail(RFX_EINVAL, "distributed: model_fit_source: the handle is NULL");
    double rec[40];
    rfx_status local = RFX_OK;
    size_t k = 0;
    if (!params || !src || !out)
        local = fail(RFX_EINVAL, "distributed: model_fit_source: NULL argument");
    else
        k = fit_record(params, rec);
    if (!local && d->p.deterministic && params->method == RFX_METHOD_CLASSIFY) {
        /* the optimizer's sums go in MPI's order: the same bits for one
         * rank count, not for any */
        const rfx_classify_params cp = classify_given(params);
        if ((cp.loss != RFX_LOSS_SQUARED && cp.loss != RFX_LOSS_AUTO) ||
            cp.optimizer != RFX_OPTIMIZER_AUTO ||
            cp.class_weights || cp.balanced)
            local = fail(RFX_EINVAL, "distributed: the deterministic mode fits from statistics "
                         "(ridge, bayes, the least-squares classifier); a classifier of the %s "
                         "loss%s sums its gradients in MPI's order", rfx_loss_name(cp.loss),
                         cp.loss == RFX_LOSS_SQUARED || cp.loss == RFX_LOSS_AUTO
                             ? " with class weights or an optimizer"
                             : "");
    }
    TRY(agree(d, "fit parameters", rec, k * sizeof *rec, local));
    if (params->features.length_scales)
        TRY(rfx_dist_agree(d, "length scales", params->features.length_scales,
                           n_inputs * sizeof(double)));
    fit_ctx c = {d, params->progress, params->progress_user};
    rfx_fit_parts parts = {(size_t)d->size, (size_t)d->rank, n_inputs, n_targets,
                           fit_offsets, fit_gather, fit_sum_exact, fit_max, fit_stats,
                           fit_sum, fit_fail, &c};
    return rfx_model_fit_parts(params, src, &parts, out, report);
}
