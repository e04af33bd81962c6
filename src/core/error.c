/* SPDX-License-Identifier: BSD-3-Clause */
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

rfx_status rfx_set_error(rfx_status status, const char *message)
{
    /* message may point into msg itself (rfx_last_error()): memmove */
    size_t len = message ? strnlen(message, sizeof msg - 1) : 0;
    if (len) memmove(msg, message, len);
    msg[len] = '\0';
    return status;
}

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

/* The length of the UTF-8 sequence at s (n bytes left) when it is well
 * formed (no overlong form, surrogate or code point past U+10FFFF) and not
 * a C1 control (U+0080..U+009F); else 0. */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    size_t len;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) len = 3;
    else if (c >= 0xF0 && c <= 0xF4) len = 4;
    else return 0;
    if (c == 0xC2) lo = 0xA0; /* C1 */
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t k = 2; k < len; k++)
        if (s[k] < 0x80 || s[k] > 0xBF) return 0;
    return len;
}

const char *rfx__quote(const char *s, size_t len, size_t max, char *buf, size_t size)
{
    static const char HEX[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0, shown = len < max ? len : max;
    if (size == 0) return buf;
    while (i < shown) {
        unsigned c = u[i];
        size_t seq = c >= 0x80 ? utf8_printable(u + i, shown - i) : 0;
        if (c >= 0x20 && c != 0x7f && c < 0x80) seq = 1;
        if (seq) {
            if (o + seq >= size) break;
            memcpy(buf + o, s + i, seq);
            o += seq;
            i += seq;
            continue;
        }
        if (o + 4 >= size) break;
        buf[o++] = '\\';
        if (c == '\t' || c == '\n' || c == '\r') {
            buf[o++] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
        } else {
            buf[o++] = 'x';
            buf[o++] = HEX[c >> 4];
            buf[o++] = HEX[c & 15];
        }
        i++;
    }
    if (i < len && o + 3 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
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
