# pm_index: PostgreSQL index access methods whose nodes live in persistent memory.
#
#   make                 the extension
#   make unit-tests      the C unit tests of src/core (tests/unit/bin: plain and sanitized)
#   make benches         the core micro-benchmarks (bench/bin)
#   make install         install into the PostgreSQL that pg_config names
#   make installcheck    pg_regress against a running server (PGHOST/PGPORT; it must have
#                        shared_preload_libraries = 'pm_index'), then the Perl TAP suite
#   make prove_installcheck   the Perl TAP suite alone (PROVE_TESTS=tests/t/010_*.pl for one
#                        file); its tests start their own servers, so run it as a user other
#                        than root, on an installed pm_index
#   tests/run            everything, on a throwaway cluster (see README.md)

EXTENSION = pm_index pm_index_postgis
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" pm_index.control)
MODULE_big = pm_index

CORE_OBJS = src/core/pm_common.o src/core/pm_key.o src/core/pool.o src/core/alloc.o src/core/epoch.o src/core/recon.o \
	src/core/nbtree/nbt_inner.o src/core/nbtree/nbt_leaf.o src/core/nbtree/nbt_smo.o \
	src/core/nbtree/nbt_build.o src/core/nbtree/nbt_rec.o \
	src/core/fbrtree/fbr_node.o src/core/fbrtree/fbr_split.o src/core/fbrtree/fbr_insert.o \
	src/core/fbrtree/fbr_delete.o src/core/fbrtree/fbr_search.o src/core/fbrtree/fbr_build.o \
	src/core/fbrtree/fbr_recover.o src/core/fbrtree/fbr_check.o \
	src/core/phast/phast_inode.o src/core/phast/phast_lnode.o src/core/phast/phast_ops.o \
	src/core/phast/phast_build.o
PG_OBJS = src/pg/pmi_module.o src/pg/pmi_am.o src/pg/pmi_pool.o src/pg/pmi_registry.o src/pg/pmi_handle.o \
	src/pg/pmi_build.o src/pg/pmi_vacuum.o src/pg/pmi_wal.o src/pg/pmi_redo.o src/pg/pmi_interlock.o src/pg/pmi_check.o src/pg/pmi_reconcile.o src/pg/pmi_planner.o \
	src/pg/pmi_storage.o src/pg/pmi_trust.o src/pg/pmi_fill.o src/pg/pmi_sweeper.o src/pg/pmi_load.o src/pg/pmi_inspect.o src/pg/pmi_unique.o \
	src/pg/ordered/ord_key.o src/pg/ordered/ord_handler.o src/pg/ordered/ord_validate.o \
	src/pg/ordered/ord_build.o src/pg/ordered/ord_insert.o src/pg/ordered/ord_scan.o \
	src/pg/ordered/ord_cost.o src/pg/ordered/ord_planner.o src/pg/ordered/ord_entries.o \
	src/pg/ordered/ord_unique.o src/pg/ordered/ord_batch.o \
	src/pg/nbtree_pm/nbtpm_handler.o src/pg/nbtree_pm/nbtpm_index.o src/pg/nbtree_pm/nbtpm_check.o \
	src/pg/phast_pm/phastpm_handler.o src/pg/phast_pm/phastpm_index.o src/pg/phast_pm/phastpm_check.o \
	src/pg/fbrtree_pm/fbrpm_handler.o src/pg/fbrtree_pm/fbrpm_key.o src/pg/fbrtree_pm/fbrpm_index.o \
	src/pg/fbrtree_pm/fbrpm_build.o src/pg/fbrtree_pm/fbrpm_insert.o src/pg/fbrtree_pm/fbrpm_scan.o \
	src/pg/fbrtree_pm/fbrpm_cost.o src/pg/fbrtree_pm/fbrpm_check.o \
	src/pg/fbrtree_pm/fbrpm_planner.o
OBJS = $(CORE_OBJS) $(PG_OBJS)

# every version's install script and every update script of both extensions
DATA = $(wildcard src/pm_index--*.sql src/pm_index_postgis--*.sql)
REGRESS = pm_index_basics nbtree_pm_errors nbtree_pm_parity fbrtree_pm_parity fbrtree_pm_postgis vacuum_wal_boundary drop_database temp_tables verifier phast_pm_basics unique nbtree_pm_wide nbtree_pm_include nbtree_pm_multicolumn nbtree_pm_libc wal_atomic planner_bool_or scroll_cursor nbtree_pm_pattern
REGRESS_OPTS = --inputdir=. --outputdir=$(CURDIR)/tests/regress_out
TAP_TESTS = 1
PROVE_TESTS = tests/t/*.pl
PROVE_FLAGS = -I tests/lib

# make PM_ASSERTS=1 (tests/run does): pm_assert() checks on, in the extension and every test
# binary.  A stamp per mode makes switching modes rebuild everything.
ASSERT_FLAGS = $(if $(PM_ASSERTS),-DPM_ASSERT_CHECKING)
BUILD_MODE_STAMP = .build-mode-$(if $(PM_ASSERTS),asserts,plain)
$(BUILD_MODE_STAMP):
	@rm -f .build-mode-*
	@touch $@

PG_CPPFLAGS = $(ASSERT_FLAGS) -I$(srcdir)/src/pg -I$(srcdir)/src/core -I$(srcdir)/src/core/nbtree -I$(srcdir)/src/core/fbrtree -I$(srcdir)/src/core/phast -DPM_INDEX_VERSION=\"$(EXTVERSION)\"
# Keep build-machine paths out of the library (debug info, __FILE__).
PG_CFLAGS = -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare \
	-ffile-prefix-map=$(CURDIR)=.
SHLIB_LINK = -lpmem -lpthread $(ICU_LIBS)

# JIT bitcode of this module buys nothing and needs clang; skip it.
override with_llvm = no

PG_CONFIG ?= pg_config
# pgxs.mk reads EXTRA_CLEAN when it is included
EXTRA_CLEAN = tmp_check tests/unit/bin tests/unit/asan tests/fuzz/bin bench/bin .build-mode-* src/core/crashsim.o bench/core/*.o tests/regress_out
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies here: rebuild on any header change.
$(OBJS) src/core/crashsim.o: $(BUILD_MODE_STAMP) $(wildcard src/core/*.h src/core/nbtree/*.h src/core/fbrtree/*.h src/core/phast/*.h src/pg/*.h src/pg/ordered/*.h src/pg/nbtree_pm/*.h src/pg/fbrtree_pm/*.h src/pg/phast_pm/*.h)

# ---- C unit tests and micro-benchmarks of src/core (no server) ----

TEST_OBJS = $(CORE_OBJS) src/core/crashsim.o
UNIT_TESTS = $(patsubst tests/unit/%.c,tests/unit/bin/%,$(wildcard tests/unit/test_*.c))
# Every bench/core/bench_*.c with a main is a benchmark; BENCH_OBJS are linked into each.
BENCH_OBJS = bench/core/bench_common.o bench/core/baseline_btree.o
CORE_BENCHES = $(patsubst bench/core/%.c,bench/bin/%,$(filter-out bench/core/bench_common.c,$(wildcard bench/core/bench_*.c)))
STANDALONE_LIBS = -lpmem -lpthread -lm

tests/unit/bin/%: tests/unit/%.c $(TEST_OBJS) $(wildcard tests/unit/*.h) $(wildcard src/core/*.h src/core/nbtree/*.h src/core/fbrtree/*.h src/core/phast/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PG_CFLAGS) $(ASSERT_FLAGS) -I$(srcdir)/src/core -I$(srcdir)/src/core/nbtree -I$(srcdir)/src/core/fbrtree -I$(srcdir)/src/core/phast -I$(srcdir)/tests/unit $< $(TEST_OBJS) $(STANDALONE_LIBS) -o $@

# The same tests under AddressSanitizer and UBSan (undefined behaviour aborts), built from
# source so no sanitizer reaches the extension.
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CORE_SRCS = $(patsubst %.o,%.c,$(TEST_OBJS))
UNIT_TESTS_ASAN = $(patsubst %,%_asan,$(UNIT_TESTS))
# the wide variants include the test they run on wide entries
$(foreach t,model concurrent crash,$(eval tests/unit/bin/test_nbtree_$(t)_wide tests/unit/bin/test_nbtree_$(t)_wide_asan: tests/unit/test_nbtree_$(t).c))
tests/unit/bin/test_nbtree_model_order tests/unit/bin/test_nbtree_model_order_asan: tests/unit/test_nbtree_model.c
# and the N-D variants the fbrtree test they run on boxes of more dimensions
$(foreach t,model crash,$(eval tests/unit/bin/test_fbrtree_$(t)_nd tests/unit/bin/test_fbrtree_$(t)_nd_asan: tests/unit/test_fbrtree_$(t).c))

ASAN_FLAGS = -std=gnu11 -O1 -g $(SANITIZE) $(ASSERT_FLAGS) -D_GNU_SOURCE -Wall -Wextra -Werror -I$(srcdir)/src/core -I$(srcdir)/src/core/nbtree -I$(srcdir)/src/core/fbrtree -I$(srcdir)/src/core/phast -I$(srcdir)/tests/unit
# the core's sources compiled once that way, and linked into every sanitized test
ASAN_OBJS = $(patsubst %.c,tests/unit/asan/%.o,$(CORE_SRCS))

tests/unit/asan/%.o: %.c $(BUILD_MODE_STAMP) $(wildcard tests/unit/*.h) $(wildcard src/core/*.h src/core/nbtree/*.h src/core/fbrtree/*.h src/core/phast/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) -c $< -o $@

tests/unit/bin/%_asan: tests/unit/%.c $(ASAN_OBJS) $(wildcard tests/unit/*.h) $(wildcard src/core/*.h src/core/nbtree/*.h src/core/fbrtree/*.h src/core/phast/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) $< $(ASAN_OBJS) $(STANDALONE_LIBS) -o $@

# libFuzzer targets (tests/fuzz), built with clang from source like the sanitizer tests.
FUZZ_CC ?= clang-14
FUZZ_SRCS = $(filter-out src/core/crashsim.c,$(CORE_SRCS))
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,tests/fuzz/bin/%,$(wildcard tests/fuzz/fuzz_*.c))

tests/fuzz/bin/%: tests/fuzz/%.c $(FUZZ_SRCS) $(BUILD_MODE_STAMP) $(wildcard tests/fuzz/*.h) $(wildcard src/core/*.h src/core/nbtree/*.h src/core/fbrtree/*.h src/core/phast/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(ASSERT_FLAGS) -D_GNU_SOURCE -Wall -Werror -I$(srcdir)/src/core -I$(srcdir)/src/core/nbtree -I$(srcdir)/src/core/fbrtree -I$(srcdir)/src/core/phast $< $(FUZZ_SRCS) $(STANDALONE_LIBS) -o $@

fuzz: $(FUZZ_TARGETS)

$(BENCH_OBJS): $(BUILD_MODE_STAMP) $(wildcard bench/core/*.h src/core/*.h src/core/nbtree/*.h src/core/phast/*.h) tests/unit/mono_clock.h
# the benchmarks' helpers share the unit tests' clock
$(BENCH_OBJS): override CPPFLAGS += -I$(srcdir)/tests/unit

BENCH_INCLUDES = -I$(srcdir)/src/core -I$(srcdir)/src/core/nbtree -I$(srcdir)/src/core/fbrtree -I$(srcdir)/src/core/phast -I$(srcdir)/tests/unit
BENCH_HEADERS = $(wildcard bench/core/*.h src/core/*.h src/core/nbtree/*.h src/core/fbrtree/*.h src/core/phast/*.h tests/unit/*.h)

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

benches: $(CORE_BENCHES)

unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do echo "== $$t"; $$t || exit 1; done


prove_installcheck:
	$(prove_installcheck)

.PHONY: unit unit-tests benches fuzz prove_installcheck
