/*
 * regex.h - a small regular-expression matcher for RegexFullMatch
 * (runtime/kernels/strings.c): RE2's syntax for the constructs listed
 * below, matched on UTF-8 code points in time linear in the input (a Pike
 * VM over a compiled program: no backtracking, so no pattern can hang).
 *
 * Supported: literals; `.` (any code point but newline); classes `[...]`
 * and `[^...]` with ranges and the escapes below; `\d \w \s` and their
 * negations `\D \W \S` (ASCII, as in RE2); escaped punctuation, `\n \t \r
 * \f \v \a`, `\xHH` and `\x{HHHH}`; groups `(...)` and `(?:...)`;
 * alternation `|`; `* + ?` and `{n}`, `{n,}`, `{n,m}` (n, m <= 1000),
 * each also non-greedy (`*?` ...: the same for a full match); `^` and `$`
 * (start and end of the text).
 *
 * Refused with a message (sg_rx_compile returns false): flags `(?i)` and
 * the like, named groups, `\b \B \A \z \p \P \Q \C`, POSIX classes
 * `[[:alpha:]]`, `\D \W \S` inside a class, back-references (not RE2
 * syntax either), and any syntax error.
 */
#ifndef SG_KERNELS_REGEX_H
#define SG_KERNELS_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sg_rx;

/* Compile pattern[len]; false with the reason in msg[size]. *out is freed
 * with sg_rx_free. */
bool sg_rx_compile(const uint8_t *pattern, size_t len, struct sg_rx **out, char *msg, size_t size);

/* Whether the whole of text[len] matches. -1: out of memory, or text is
 * not valid UTF-8 (RE2 then works on bytes; we refuse instead). */
int sg_rx_full_match(const struct sg_rx *rx, const uint8_t *text, size_t len);

void sg_rx_free(struct sg_rx *rx);

#endif
