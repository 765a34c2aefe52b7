/*
 * utf8.h - the one UTF-8 validator of graph/ (internal): the JSON reader
 * and writer and the diagnostics agree on which bytes are text.
 */
#ifndef SG_UTF8_H
#define SG_UTF8_H

#include <stddef.h>

/* Length (1-4) of the well-formed UTF-8 sequence at p (before end), or 0:
 * no overlong forms, no surrogates, nothing past U+10FFFF. */
size_t sg__utf8_len(const unsigned char *p, const unsigned char *end);

#endif
