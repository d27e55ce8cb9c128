# pm_index: PostgreSQL index access methods whose nodes live in persistent memory.
#
#   make                 the extension
#   make unit-tests      the C unit tests of src/core (tests/unit/bin: plain and sanitized)
#   make benches         the core micro-benchmarks (bench/bin)
#   make install         install into the PostgreSQL that pg_config names
#   make deb             a Debian package of it, postgresql-<major>-pm-index (tools/make-deb)
#   make installcheck    pg_regress against a running server (PGHOST/PGPORT; it must have
#                        shared_preload_libraries = 'pm_index'), then the Perl TAP suite
#   make prove_installcheck   the Perl TAP suite alone (PROVE_TESTS=tests/t/010_*.pl for one
#                        file); its tests start their own servers, so run it as a user other
#                        than root, on an installed pm_index
#   tests/run            everything, on a throwaway cluster (see README.md)

EXTENSION = pm_index pm_index_postgis
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" pm_index.control)
MODULE_big = pm_index

# Every source in the folders: a structure is a folder under src/core, an access method one
# under src/pg; nothing here names them.  crashsim.c is the unit tests' power-failure simulator.
CORE_DIRS = src/core $(sort $(patsubst %/,%,$(dir $(wildcard src/core/*/*.c))))
PG_DIRS = src/pg $(sort $(patsubst %/,%,$(dir $(wildcard src/pg/*/*.c))))
CORE_OBJS = $(patsubst %.c,%.o,$(filter-out src/core/crashsim.c,$(sort $(wildcard $(addsuffix /*.c,$(CORE_DIRS))))))
PG_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard $(addsuffix /*.c,$(PG_DIRS)))))
CORE_HEADERS = $(wildcard $(addsuffix /*.h,$(CORE_DIRS)))
PG_HEADERS = $(wildcard $(addsuffix /*.h,$(PG_DIRS)))
CORE_INCLUDES = $(addprefix -I$(srcdir)/,$(CORE_DIRS))
OBJS = $(CORE_OBJS) $(PG_OBJS)

# every version's install script and every update script of both extensions
DATA = $(wildcard src/pm_index--*.sql src/pm_index_postgis--*.sql)
REGRESS = $(sort $(patsubst tests/sql/%.sql,%,$(wildcard tests/sql/*.sql)))
REGRESS_OPTS = --inputdir=tests --outputdir=$(CURDIR)/tests/regress_out
TAP_TESTS = 1
PROVE_TESTS = tests/t/*.pl
PROVE_FLAGS = -I tests/lib

# make PM_ASSERTS=1 (tests/run does): pm_assert() checks on, in the extension and every test
# binary.
ASSERT_FLAGS = $(if $(PM_ASSERTS),-DPM_ASSERT_CHECKING)

PG_CPPFLAGS = $(ASSERT_FLAGS) -I$(srcdir)/src/pg $(CORE_INCLUDES) -DPM_INDEX_VERSION=\"$(EXTVERSION)\"
# Keep build-machine paths out of the library (debug info, __FILE__).
PG_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare \
	-ffile-prefix-map=$(CURDIR)=.
SHLIB_LINK = -lpmem -lpthread $(ICU_LIBS)

# JIT bitcode of this module buys nothing and needs clang; skip it.
override with_llvm = no

PG_CONFIG ?= pg_config
# pgxs.mk reads EXTRA_CLEAN when it is included
EXTRA_CLEAN = tmp_check tests/unit/bin tests/unit/asan tests/fuzz/bin bench/bin .build-mode src/core/crashsim.o bench/core/*.o tests/regress_out
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# .build-mode names the PostgreSQL installation (its server headers: two builds of one major
# can differ, in ICU say) and the assert mode of the objects; it is rewritten, and so rebuilds
# everything, when either changes.  (PostgreSQL's .SECONDARY makes a missing stamp file rebuild
# nothing, hence one file with contents.)
BUILD_MODE = $(includedir_server) $(if $(PM_ASSERTS),asserts,plain)
ifneq ($(BUILD_MODE),$(shell cat .build-mode 2>/dev/null))
$(shell echo '$(BUILD_MODE)' >.build-mode)
endif
BUILD_MODE_STAMP = .build-mode

# the version the library reports comes from the control file
src/pg/pmi_inspect.o: pm_index.control

# PGXS tracks no header dependencies here: rebuild on any header change.
$(OBJS) src/core/crashsim.o: $(BUILD_MODE_STAMP) $(CORE_HEADERS) $(PG_HEADERS)

# ---- C unit tests and micro-benchmarks of src/core (no server) ----

TEST_OBJS = $(CORE_OBJS) src/core/crashsim.o
UNIT_TESTS = $(patsubst tests/unit/%.c,tests/unit/bin/%,$(wildcard tests/unit/test_*.c))
# Every bench/core/bench_*.c with a main is a benchmark; BENCH_OBJS are linked into each.
BENCH_OBJS = bench/core/bench_common.o bench/core/baseline_btree.o
CORE_BENCHES = $(patsubst bench/core/%.c,bench/bin/%,$(filter-out bench/core/bench_common.c,$(wildcard bench/core/bench_*.c)))
STANDALONE_LIBS = -lpmem -lpthread -lm

tests/unit/bin/%: tests/unit/%.c $(TEST_OBJS) $(wildcard tests/unit/*.h) $(CORE_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PG_CFLAGS) $(ASSERT_FLAGS) $(CORE_INCLUDES) -I$(srcdir)/tests/unit $< $(TEST_OBJS) $(STANDALONE_LIBS) -o $@

# The same tests under AddressSanitizer and UBSan (undefined behaviour aborts), built from
# source so no sanitizer reaches the extension.
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CORE_SRCS = $(patsubst %.o,%.c,$(TEST_OBJS))
UNIT_TESTS_ASAN = $(patsubst %,%_asan,$(UNIT_TESTS))
# the wide variants include the test they run on wide entries
$(foreach t,model concurrent crash,$(eval tests/unit/bin/test_nbtree_$(t)_wide tests/unit/bin/test_nbtree_$(t)_wide_asan: tests/unit/test_nbtree_$(t).c))
tests/unit/bin/test_nbtree_model_order tests/unit/bin/test_nbtree_model_order_asan: tests/unit/test_nbtree_model.c
tests/unit/bin/test_nvbtree_model_wide tests/unit/bin/test_nvbtree_model_wide_asan tests/unit/bin/test_nvbtree_model_order tests/unit/bin/test_nvbtree_model_order_asan: tests/unit/test_nvbtree_model.c
tests/unit/bin/test_nvbtree_crash_wide tests/unit/bin/test_nvbtree_crash_wide_asan: tests/unit/test_nvbtree_crash.c
tests/unit/bin/test_nvbtree_concurrent_wide tests/unit/bin/test_nvbtree_concurrent_wide_asan: tests/unit/test_nvbtree_concurrent.c
# and the N-D variants the fbrtree test they run on boxes of more dimensions
$(foreach t,model crash,$(eval tests/unit/bin/test_fbrtree_$(t)_nd tests/unit/bin/test_fbrtree_$(t)_nd_asan: tests/unit/test_fbrtree_$(t).c))

ASAN_FLAGS = -std=gnu11 -O1 -g $(SANITIZE) $(ASSERT_FLAGS) -D_GNU_SOURCE -Wall -Wextra -Werror $(CORE_INCLUDES) -I$(srcdir)/tests/unit
# the core's sources compiled once that way, and linked into every sanitized test
ASAN_OBJS = $(patsubst %.c,tests/unit/asan/%.o,$(CORE_SRCS))

tests/unit/asan/%.o: %.c $(BUILD_MODE_STAMP) $(wildcard tests/unit/*.h) $(CORE_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) -c $< -o $@

tests/unit/bin/%_asan: tests/unit/%.c $(ASAN_OBJS) $(wildcard tests/unit/*.h) $(CORE_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) $< $(ASAN_OBJS) $(STANDALONE_LIBS) -o $@

# libFuzzer targets (tests/fuzz), built with clang from source like the sanitizer tests.
FUZZ_CC ?= clang-14
FUZZ_SRCS = $(filter-out src/core/crashsim.c,$(CORE_SRCS))
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,tests/fuzz/bin/%,$(wildcard tests/fuzz/fuzz_*.c))

tests/fuzz/bin/%: tests/fuzz/%.c $(FUZZ_SRCS) $(BUILD_MODE_STAMP) $(wildcard tests/fuzz/*.h) $(CORE_HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(ASSERT_FLAGS) -D_GNU_SOURCE -Wall -Werror $(CORE_INCLUDES) $< $(FUZZ_SRCS) $(STANDALONE_LIBS) -o $@

# the wide variant includes the target it runs on a wide tree
tests/fuzz/bin/fuzz_nvbtree_wide: tests/fuzz/fuzz_nvbtree.c

fuzz: $(FUZZ_TARGETS)

$(BENCH_OBJS): $(BUILD_MODE_STAMP) $(wildcard bench/core/*.h) $(CORE_HEADERS) tests/unit/mono_clock.h
# the benchmarks' helpers share the unit tests' clock
$(BENCH_OBJS): override CPPFLAGS += -I$(srcdir)/tests/unit

BENCH_INCLUDES = $(CORE_INCLUDES) -I$(srcdir)/tests/unit
BENCH_HEADERS = $(wildcard bench/core/*.h tests/unit/*.h) $(CORE_HEADERS)

bench/bin/%: bench/core/%.c $(BENCH_OBJS) $(TEST_OBJS) $(BENCH_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PG_CFLAGS) $(BENCH_INCLUDES) $< $(BENCH_OBJS) $(TEST_OBJS) $(STANDALONE_LIBS) -o $@

# bench_fbrtree with C entries per node (make bench/bin/bench_fbrtree_capC): the FBR-tree's
# sources compiled again with that fan-out, for bench/run's fan-out study.
FBR_SRCS = $(patsubst %.o,%.c,$(filter src/core/fbrtree/%,$(CORE_OBJS)))
FBR_OTHER_OBJS = $(filter-out src/core/fbrtree/%,$(TEST_OBJS))

bench/bin/bench_fbrtree_cap%: bench/core/bench_fbrtree.c $(FBR_SRCS) $(FBR_OTHER_OBJS) $(BENCH_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PG_CFLAGS) -DFBR_CAP=$* $(BENCH_INCLUDES) $< $(FBR_SRCS) $(FBR_OTHER_OBJS) $(STANDALONE_LIBS) -o $@

unit-tests: $(UNIT_TESTS) $(UNIT_TESTS_ASAN)

# tests/run: without the sanitized builds of the crash and concurrency tests (long enumerations
# of power failures, kills and interleavings) and of the models under a collation's order (the
# wide models' code under strcoll, whose sanitized wide models run), which tests/torture runs
# (PM_UNIT_SANITIZE=all)
UNIT_TESTS_DEEP = $(foreach t,$(UNIT_TESTS_ASAN),$(if $(findstring _crash,$(t))$(findstring _concurrent,$(t))$(findstring _order,$(t)),$(t)))
UNIT_TESTS_TIER = $(UNIT_TESTS) $(filter-out $(UNIT_TESTS_DEEP),$(UNIT_TESTS_ASAN))
unit-tests-tier: $(UNIT_TESTS_TIER)

# tests/run --fast: without the sanitized builds
unit-tests-plain: $(UNIT_TESTS)

# the binaries each of the three builds, which tests/run runs
list-unit-tests:
	@echo $(UNIT_TESTS) $(UNIT_TESTS_ASAN)
list-unit-tests-tier:
	@echo $(UNIT_TESTS_TIER)
list-unit-tests-plain:
	@echo $(UNIT_TESTS)

benches: $(CORE_BENCHES)

unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do echo "== $$t"; $$t || exit 1; done


prove_installcheck:
	$(prove_installcheck)

# a Debian package for the PostgreSQL that pg_config names, in the repository root
deb:
	$(srcdir)/tools/make-deb $(CURDIR)

.PHONY: deb unit unit-tests unit-tests-tier unit-tests-plain list-unit-tests list-unit-tests-tier list-unit-tests-plain benches fuzz prove_installcheck
