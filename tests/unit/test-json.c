// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for json.c's strings: quote, backslash and control
 * characters escaped, valid UTF-8 kept as it is, and every byte that is
 * not part of a valid sequence written as \udcXX (Python's
 * surrogateescape), so that the report is valid JSON for any path and
 * loses nothing.  Every string is compared to the byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdd.h"

/* pdd_json_str(in) must print want; a failure shows the input in hex */
static void check(const char *in, const char *want)
{
	char *buf = NULL, got[1024], exp[1024], hex[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	pdd_json_str(f, in);
	fclose(f);
	for (const unsigned char *p = (const unsigned char *)in; in && *p; p++)
		snprintf(hex + strlen(hex), sizeof(hex) - strlen(hex), "%02x ", *p);
	snprintf(got, sizeof(got), "%s-> %s", hex, buf);
	snprintf(exp, sizeof(exp), "%s-> %s", hex, want);
	assert_string_equal(got, exp);
	free(buf);
}

static void test_null(void **state)
{
	(void)state;
	check(NULL, "null");
}

static void test_ascii_kept(void **state)
{
	(void)state;
	check("", "\"\"");
	check("/dev/sdb", "\"/dev/sdb\"");
	check("a b~", "\"a b~\"");
}

static void test_quote_backslash_control(void **state)
{
	(void)state;
	check("a\"b\\c", "\"a\\\"b\\\\c\"");
	check("a\nb", "\"a\\nb\"");
	check("\x01\t\r\x1f", "\"\\u0001\\u0009\\u000d\\u001f\"");
	check("\x7f", "\"\\u007f\"");
}

static void test_valid_utf8_kept(void **state)
{
	(void)state;
	check("\xc3\xa9", "\"\xc3\xa9\"");			/* é */
	check("\xc2\x80", "\"\xc2\x80\"");			/* U+0080, the first */
	check("\xdf\xbf", "\"\xdf\xbf\"");
	check("\xe0\xa0\x80", "\"\xe0\xa0\x80\"");		/* U+0800 */
	check("\xe2\x82\xac", "\"\xe2\x82\xac\"");		/* € */
	check("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");		/* U+D7FF */
	check("\xee\x80\x80", "\"\xee\x80\x80\"");		/* U+E000 */
	check("\xef\xbf\xbf", "\"\xef\xbf\xbf\"");		/* U+FFFF */
	check("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\"");	/* U+10000 */
	check("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");	/* U+1F600 */
	check("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");	/* U+10FFFF */
}

static void test_every_lone_high_byte_escaped(void **state)
{
	char in[2] = "", want[16];

	(void)state;
	for (int b = 0x80; b <= 0xff; b++) {
		in[0] = (char)b;
		snprintf(want, sizeof(want), "\"\\udc%02x\"", b);
		check(in, want);
	}
}

static void test_overlong_escaped(void **state)
{
	(void)state;
	check("\xc0\xaf", "\"\\udcc0\\udcaf\"");
	check("\xc1\xbf", "\"\\udcc1\\udcbf\"");
	check("\xe0\x80\xaf", "\"\\udce0\\udc80\\udcaf\"");
	check("\xe0\x9f\xbf", "\"\\udce0\\udc9f\\udcbf\"");
	check("\xf0\x8f\xbf\xbf", "\"\\udcf0\\udc8f\\udcbf\\udcbf\"");
}

static void test_surrogates_escaped(void **state)
{
	(void)state;
	check("\xed\xa0\x80", "\"\\udced\\udca0\\udc80\"");	/* U+D800 */
	check("\xed\xbf\xbf", "\"\\udced\\udcbf\\udcbf\"");	/* U+DFFF */
}

static void test_above_10ffff_escaped(void **state)
{
	(void)state;
	check("\xf4\x90\x80\x80", "\"\\udcf4\\udc90\\udc80\\udc80\"");
	check("\xf5\x80\x80\x80", "\"\\udcf5\\udc80\\udc80\\udc80\"");
}

static void test_cut_short_escaped(void **state)
{
	(void)state;
	check("\xe2\x82", "\"\\udce2\\udc82\"");
	check("\xe2\x82x", "\"\\udce2\\udc82x\"");
	check("\xf0\x9f\x98", "\"\\udcf0\\udc9f\\udc98\"");
	check("\xc3", "\"\\udcc3\"");
	/* the byte that cuts a sequence short starts its own */
	check("\xe2\xc3\xa9", "\"\\udce2\xc3\xa9\"");
	check("\xe2\x82\xe2\x82\xac", "\"\\udce2\\udc82\xe2\x82\xac\"");
	check("\xc3\"", "\"\\udcc3\\\"\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_ascii_kept),
		cmocka_unit_test(test_quote_backslash_control),
		cmocka_unit_test(test_valid_utf8_kept),
		cmocka_unit_test(test_every_lone_high_byte_escaped),
		cmocka_unit_test(test_overlong_escaped),
		cmocka_unit_test(test_surrogates_escaped),
		cmocka_unit_test(test_above_10ffff_escaped),
		cmocka_unit_test(test_cut_short_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
