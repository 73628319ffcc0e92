# pdd - parallel block-device copier
#
#   make            build ./pdd
#   make static     build ./pdd-static, linked statically, for rescue media
#   make check      install what is missing, build, run every test
#   make demo       install what is missing, build, clone a sample image
#   make install    PREFIX=/usr/local DESTDIR=  (pdd, its man page, its bash completion)
#   V=1             show the commands

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Werror
# CPPFLAGS and LDFLAGS are the caller's too (dpkg-buildflags' hardening)
ALL_CFLAGS = -std=gnu11 $(WARN) -Iinclude $(CPPFLAGS) $(CFLAGS)
LDLIBS   = -lpthread -lm

# make static (STATIC=y in a make of its own): ./pdd-static, linked with
# -static from the static archives (.a) of the libraries below, with what
# each needs in turn (pkg-config --static).  Its objects are in
# build/static, built with the HAVE_ flags of what is linked.  A library
# that has no archive, or needs one that is missing, is left out as if it
# were not installed, and pdd --version says which archive was missing.
ifeq ($(STATIC),y)
OBJ = build/static
PC_LIBS = pkg-config --static --libs
archive = $(filter /%,$(shell $(CC) -print-file-name=lib$(1).a))
no_archives = $(sort $(foreach l,$(patsubst -l%,%,$(filter -l%,$(1))),$(if $(call archive,$(l)),,lib$(l).a)))
ALL_CFLAGS += -DPDD_STATIC
else
OBJ = build
PC_LIBS = pkg-config --libs
no_archives =
endif
comma := ,
space := $(subst ,, )

# The asynchronous engines are built where their libraries are installed
# (make check and make demo install them first); threads always is.
HAVE_URING := $(shell pkg-config --exists liburing 2>/dev/null && echo y)
HAVE_AIO   := $(shell test -e /usr/include/libaio.h && echo y)
HAVE_SGUTILS := $(shell test -e /usr/include/scsi/sg_lib.h && echo y)
HAVE_LIBMOUNT := $(shell pkg-config --exists mount 2>/dev/null && echo y)
HAVE_LIBNBD := $(shell pkg-config --exists libnbd 2>/dev/null && echo y)
HAVE_LIBCRYPTO := $(shell pkg-config --exists libcrypto 2>/dev/null && echo y)
# what each links with; libnbd.pc names none of the libraries Debian's
# libnbd is built with (GnuTLS, libxml2), which a static link needs
URING_LIBS = $(shell $(PC_LIBS) liburing)
AIO_LIBS = -laio
SGUTILS_LIBS = -lsgutils2
LIBMOUNT_LIBS = $(shell $(PC_LIBS) mount)
LIBNBD_LIBS = $(shell $(PC_LIBS) libnbd $(if $(STATIC),gnutls libxml-2.0))
LIBCRYPTO_LIBS = $(shell $(PC_LIBS) libcrypto)

# left out of the static build: HAVE_$(1) unset, and the archives missing
# told to version.c
define static_check
ifeq ($$(HAVE_$(1)),y)
$(1)_MISSING := $$(call no_archives,$$($(1)_LIBS))
ifneq ($$($(1)_MISSING),)
HAVE_$(1) :=
ALL_CFLAGS += -DPDD_NO_$(1)='"not built (no $$(subst $$(space),$$(comma)$$(space),$$($(1)_MISSING)))"'
endif
endif
endef
ifeq ($(STATIC),y)
$(foreach l,URING AIO SGUTILS LIBMOUNT LIBNBD LIBCRYPTO,$(eval $(call static_check,$(l))))
endif

ENGINE_SRCS = src/engines/threads.c
ifeq ($(HAVE_URING),y)
# liburing 2.3 has no call that tells its version: pdd --version gives
# the one it was built with
ALL_CFLAGS += -DHAVE_LIBURING -DPDD_LIBURING_VERSION='"$(shell pkg-config --modversion liburing)"'
ENGINE_SRCS += src/engines/uring.c
LDLIBS += $(URING_LIBS)
endif
ifeq ($(HAVE_SGUTILS),y)
ALL_CFLAGS += -DHAVE_SGUTILS
SCSI_SRCS = src/scsi.c
ENGINE_SRCS += src/engines/sg.c
LDLIBS += $(SGUTILS_LIBS)
endif
ifeq ($(HAVE_AIO),y)
# libaio has neither a version call nor a .pc file: the version of the
# package it was built from, where dpkg knows it
AIO_VERSION := $(shell dpkg-query -W -f '$${source:Upstream-Version}' libaio-dev 2>/dev/null)
ALL_CFLAGS += -DHAVE_LIBAIO $(if $(AIO_VERSION),-DPDD_LIBAIO_VERSION='"$(AIO_VERSION)"')
ENGINE_SRCS += src/engines/aio.c
LDLIBS += $(AIO_LIBS)
endif

# libmount (libmount-dev) reads /proc's mounts and swap areas for the
# guard; a pdd built without it cannot tell what is mounted, so it refuses
# every block-device output unless oflag=force, and its link says so.
# make HAVE_LIBMOUNT= builds that pdd.
ifeq ($(HAVE_LIBMOUNT),y)
ALL_CFLAGS += -DHAVE_LIBMOUNT $(shell pkg-config --cflags mount)
GUARD_SRCS = src/guard-mount.c
LDLIBS += $(LIBMOUNT_LIBS)
else ifeq ($(STATIC),y)
# the static pdd, where libmount has no archive: /proc read by pdd's own
# guard-proc.c, which make unit tests against libmount's answers
ALL_CFLAGS += -DHAVE_PROCMOUNTS
GUARD_SRCS = src/guard-proc.c
else
no_libmount = @echo "pdd: libmount-dev not found: mount and swap checks are built without it" >&2
endif

# The shared pdd loads libnbd and libcrypto when a copy needs them
# (src/libs.c says why) by the soname of the library built against, read
# here off its .so link; the static one links them.
soname = $(or $(shell objdump -p $(shell pkg-config --variable=libdir $(1))/$(1).so 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }'),$(2))
ifneq ($(STATIC),y)
ALL_CFLAGS += -DPDD_LAZY_LIBS
endif

# libnbd (libnbd-dev): sides on NBD servers, given as URIs.  Without it
# a URI is refused with a message saying so.  make HAVE_LIBNBD= builds
# that pdd, after make clean or in a build directory of its own (make -C
# DIR -f Makefile HAVE_LIBNBD=, as tests/dev/nbd-servers.sh does): the
# objects do not record how they were built.
ifeq ($(HAVE_LIBNBD),y)
ALL_CFLAGS += -DHAVE_LIBNBD $(shell pkg-config --cflags libnbd)
NBD_SRCS = src/nbd-side.c src/nbd-extents.c src/engines/nbd.c
ifeq ($(STATIC),y)
LDLIBS += $(LIBNBD_LIBS)
else
LIBNBD_SONAME := $(call soname,libnbd,libnbd.so.0)
ALL_CFLAGS += -DPDD_LIBNBD_SONAME='"$(LIBNBD_SONAME)"'
endif
else
no_libnbd = @echo "pdd: libnbd-dev not found: NBD sides are built without it" >&2
endif

# libcrypto (libssl-dev): the digests of hash=.  Without it src/hash.c is
# still built, says it is not available, and hash= is refused with a
# message saying so.  make HAVE_LIBCRYPTO= builds that pdd (after make
# clean, as for libnbd above).
ifeq ($(HAVE_LIBCRYPTO),y)
ALL_CFLAGS += -DHAVE_LIBCRYPTO $(shell pkg-config --cflags libcrypto)
ifeq ($(STATIC),y)
LDLIBS += $(LIBCRYPTO_LIBS)
else
LIBCRYPTO_SONAME := $(call soname,libcrypto,libcrypto.so.3)
ALL_CFLAGS += -DPDD_LIBCRYPTO_SONAME='"$(LIBCRYPTO_SONAME)"'
endif
else
no_libcrypto = @echo "pdd: libssl-dev not found: hash= is built without it" >&2
endif

# the static build says what it left out in its own words (make static)
ifeq ($(STATIC),y)
no_libmount =
no_libnbd =
no_libcrypto =
endif

ifeq ($(V),1)
Q =
msg = @true
else
Q = @
msg = @printf '  %-6s %s\n'
endif

SRCS = src/main.c src/args.c src/usage.c src/dev.c src/open.c src/plan.c src/copy.c src/coe.c src/copy-map.c src/copy-end.c src/copy-hash.c src/copy-report.c src/seq.c \
       src/stats.c src/json.c src/progress.c src/msg.c src/signals.c src/engine.c src/zero.c src/copy-sparse.c \
       src/map-extents.c src/map-text.c src/mapfile.c src/rescue.c src/rescue-range.c src/rescue-pass.c src/rescue-report.c src/verify.c src/verify-open.c src/verify-hash.c src/drive.c src/bufs.c src/throttle.c src/guard.c src/guard-loop.c \
       src/hash.c src/hash-log.c src/libs.c src/version.c \
       $(GUARD_SRCS) $(NBD_SRCS) $(SCSI_SRCS) $(ENGINE_SRCS)
LIB_SRCS = $(filter-out src/main.c,$(SRCS))
HDRS = $(wildcard include/*.h)

# test-hash checks pdd's digests against libcrypto's own, called directly
TEST_LIBS = $(if $(filter y,$(HAVE_LIBCRYPTO)),$(if $(STATIC),,$(LIBCRYPTO_LIBS)))
UNIT_TESTS = args plan seq stats json progress map guard core zero bufs hash $(if $(SCSI_SRCS),scsi) \
	$(if $(GUARD_SRCS),guard-proc)
TOOLS = tests/tools/stamp tests/tools/noring tests/sgdouble/libsgdouble.so
TOOLS += $(if $(shell pkg-config --exists fuse3 2>/dev/null && echo y),tests/faultfs/faultfs)

.SECONDARY:

.PHONY: all static check demo install uninstall clean deps unit unit-san tsan asan-dev clang \
	dev-tests FORCE

all: pdd

# --- the program -----------------------------------------------------------

build/%.o: %.c $(HDRS)
	$(msg) CC $<
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

pdd: $(SRCS:%.c=build/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	$(no_libmount)
	$(no_libnbd)
	$(no_libcrypto)

# --- the static program, for rescue media ----------------------------------

static:
	$(Q)$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) STATIC=y pdd-static

ifeq ($(STATIC),y)
build/static/%.o: %.c $(HDRS)
	$(msg) CC $<
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# glibc warns that a static program calling dlopen (libcrypto, for its
# engines and providers) needs the shared libraries at run time: pdd never
# loads one, its digests are built into libcrypto
pdd-static: $(SRCS:%.c=build/static/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -static -o $@ $^ $(LDLIBS)
	@./$@ --version | sed -n 's/^\(lib[^:]*: not built.*\)/  $@: \1/p'
	@echo "  $@: $$(stat -c %s $@) bytes"
endif

# --- dependencies from the distribution ------------------------------------

deps:
	$(Q)scripts/install-deps.sh

# --- tests -----------------------------------------------------------------

# the same sources built again with sanitizers, each set in its own tree
build/asan/%.o: %.c $(HDRS)
	$(msg) CC-SAN $<
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=address,undefined -fno-omit-frame-pointer \
		-fno-sanitize-recover=all -c -o $@ $<

build/tsan/%.o: %.c $(HDRS)
	$(msg) CC-TSAN $<
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=thread -c -o $@ $<

build/clang/%.o: %.c $(HDRS) FORCE
	$(msg) CLANG $<
	@mkdir -p $(dir $@)
	$(Q)clang $(ALL_CFLAGS) -c -o $@ $<

build/test-%: tests/unit/test-%.c $(LIB_SRCS:%.c=build/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ -lcmocka $(LDLIBS) $(TEST_LIBS)

build/asan/test-%: tests/unit/test-%.c $(LIB_SRCS:%.c=build/asan/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-o $@ $^ -lcmocka $(LDLIBS) $(TEST_LIBS)

# test-guard again, with the static pdd's reader of /proc (guard-proc.c)
# in place of libmount's (guard-mount.c): the same made-up /proc, the
# same answers
GUARD_PROC_OBJS = build/src/guard-proc.o $(filter-out build/src/guard-mount.o,$(LIB_SRCS:%.c=build/%.o))
build/test-guard-proc: tests/unit/test-guard.c $(GUARD_PROC_OBJS)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -DHAVE_PROCMOUNTS -o $@ $^ -lcmocka $(LDLIBS) $(TEST_LIBS)

build/asan/test-guard-proc: tests/unit/test-guard.c $(GUARD_PROC_OBJS:build/%=build/asan/%)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -DHAVE_PROCMOUNTS -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ $^ -lcmocka $(LDLIBS) $(TEST_LIBS)

# test-core runs the copy core against a fake engine, which lives in files
# of its own: the rules above link test-%.c alone
CORE_TEST_SRCS = tests/unit/test-core.c tests/unit/test-core-sched.c tests/unit/fake-engine.c \
	tests/unit/fake-engine-check.c tests/unit/fake-world.c
CORE_TEST_HDRS = tests/unit/test-core.h tests/unit/fake-engine.h

build/test-core: $(CORE_TEST_SRCS) $(CORE_TEST_HDRS) $(LIB_SRCS:%.c=build/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(filter-out %.h,$^) -lcmocka $(LDLIBS) $(TEST_LIBS)

build/asan/test-core: $(CORE_TEST_SRCS) $(CORE_TEST_HDRS) $(LIB_SRCS:%.c=build/asan/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=address,undefined -fno-omit-frame-pointer \
		-fno-sanitize-recover=all -o $@ $(filter-out %.h,$^) -lcmocka $(LDLIBS) $(TEST_LIBS)

# the digests' threads and ring, and the buffers' helper, under TSan
# (make tsan runs them)
build/tsan/test-%: tests/unit/test-%.c $(LIB_SRCS:%.c=build/tsan/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=thread -o $@ $^ -lcmocka $(LDLIBS) $(TEST_LIBS)

build/asan/pdd: $(SRCS:%.c=build/asan/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all \
		-o $@ $^ $(LDLIBS)

build/tsan/pdd: $(SRCS:%.c=build/tsan/%.o)
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=thread -o $@ $^ $(LDLIBS)

# the zero check's speed, for scripts/bench-zero.sh
build/zerospeed: tests/tools/zerospeed.c build/src/zero.o
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^

# the digests' speed through src/hash.c
build/hashspeed: tests/tools/hashspeed.c build/src/hash.o build/src/libs.o
	$(msg) LINK $@
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

tests/tools/%: tests/tools/%.c
	$(msg) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $<

tests/sgdouble/libsgdouble.so: tests/sgdouble/sgdouble.c
	$(msg) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -shared -fPIC -o $@ $< -ldl

tests/faultfs/faultfs: tests/faultfs/faultfs.c tests/faultfs/faults.c tests/faultfs/faults.h
	$(msg) CC $@
	$(Q)$(CC) $(ALL_CFLAGS) $$(pkg-config --cflags fuse3) -o $@ $(filter %.c,$^) $$(pkg-config --libs fuse3)

unit: $(UNIT_TESTS:%=build/test-%)
	$(Q)for t in $^; do $$t || exit 1; done

unit-san: $(UNIT_TESTS:%=build/asan/test-%)
	$(Q)for t in $^; do ASAN_OPTIONS=detect_leaks=1 $$t || exit 1; done

clang: $(SRCS:%.c=build/clang/%.o) build/clang/src/guard-proc.o
	@echo "  clang: no warnings"

tsan: build/tsan/pdd build/tsan/test-hash build/tsan/test-bufs $(TOOLS)
	$(Q)TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}" build/tsan/test-hash
	$(Q)TSAN_OPTIONS="halt_on_error=1 $${TSAN_OPTIONS:-}" build/tsan/test-bufs
	$(Q)PDD=build/tsan/pdd tests/run-tests tests/dev/tsan-threads.sh tests/dev/tsan-sg.sh

# every engine's copy path under ASan+UBSan, on files, pipes and devices
ASAN_DEV_TESTS = tests/dev/streams.sh tests/dev/loop-devices.sh tests/dev/dd-diff.sh \
	tests/dev/too-small.sh tests/dev/engine-fallback.sh tests/dev/sg-copy.sh \
	tests/dev/coe-blocks.sh tests/dev/coe-limit.sh tests/dev/map.sh tests/dev/map-write.sh \
	tests/dev/append.sh tests/dev/std-offset.sh
asan-dev: build/asan/pdd $(TOOLS)
	$(Q)PDD=build/asan/pdd DIFF_RUNS=60 tests/run-tests $(ASAN_DEV_TESTS)

dev-tests: pdd $(TOOLS)
	$(Q)tests/run-tests

check: deps
	$(Q)$(MAKE) --no-print-directory all $(TOOLS)
	$(Q)$(MAKE) --no-print-directory clang
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory unit-san
	$(Q)$(MAKE) --no-print-directory tsan
	$(Q)$(MAKE) --no-print-directory asan-dev
	$(Q)$(MAKE) --no-print-directory dev-tests

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(TOOLS)
	$(Q)scripts/demo.sh

# --- install ---------------------------------------------------------------

# the completion goes where bash-completion looks for it by the command's
# name when it is first completed
COMPDIR = $(PREFIX)/share/bash-completion/completions

install: pdd
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(COMPDIR)
	install -m 755 pdd $(DESTDIR)$(PREFIX)/bin/pdd
	install -m 644 man/pdd.1 $(DESTDIR)$(PREFIX)/share/man/man1/pdd.1
	install -m 644 completion/pdd $(DESTDIR)$(COMPDIR)/pdd

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/pdd $(DESTDIR)$(PREFIX)/share/man/man1/pdd.1 \
		$(DESTDIR)$(COMPDIR)/pdd

clean:
	rm -rf build pdd pdd-static $(TOOLS)
