/* Status codes and the thread-local error message. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define RFX__MSG_MAX 1024

static _Thread_local char msg[RFX__MSG_MAX];

const char *rfx_version(void) { return RFX_VERSION_STRING; }

const char *rfx_strerror(rfx_status status)
{
    switch (status) {
    case RFX_OK: return "success";
    case RFX_EINVAL: return "invalid argument";
    case RFX_ENOMEM: return "out of memory";
    case RFX_EOVERFLOW: return "size overflow";
    case RFX_EDIM: return "dimension mismatch";
    case RFX_EIO: return "input/output error";
    case RFX_EPARSE: return "malformed input data";
    case RFX_EFORMAT: return "corrupt or truncated model";
    case RFX_EVERSION: return "unsupported model format version";
    case RFX_ENUMERIC: return "numerical failure";
    case RFX_ECANCELLED: return "cancelled";
    case RFX_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *rfx_last_error(void) { return msg; }

void rfx_clear_error(void) { msg[0] = '\0'; }

rfx_status rfx__error(rfx_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return status;
}

void rfx__error_prefix(const char *fmt, ...)
{
    char prefix[RFX__MSG_MAX / 2];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(prefix, sizeof prefix - 2, fmt, ap);
    va_end(ap);
    if (len < 0) return;
    size_t plen = strlen(prefix);
    memcpy(prefix + plen, ": ", 3);
    plen += 2;
    size_t old = strlen(msg);
    if (old + plen >= sizeof msg) old = sizeof msg - plen - 1;
    memmove(msg + plen, msg, old);
    msg[plen + old] = '\0';
    memcpy(msg, prefix, plen);
}

void rfx__failure_init(rfx__failure *f)
{
    f->index = SIZE_MAX;
    f->status = RFX_OK;
    f->msg[0] = '\0';
}

void rfx__failure_note(rfx__failure *f, size_t index, rfx_status status)
{
    if (status == RFX_OK) return;
#pragma omp critical
    {
        if (index < f->index) {
            f->index = index;
            f->status = status;
            snprintf(f->msg, sizeof f->msg, "%s", msg);
        }
    }
}

rfx_status rfx__failure_raise(const rfx__failure *f)
{
    if (f->status == RFX_OK) return RFX_OK;
    snprintf(msg, sizeof msg, "%s", f->msg);
    return f->status;
}
