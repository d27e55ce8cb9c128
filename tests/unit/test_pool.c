/*
 * test_pool.c
 *	  Pool files: create, reopen, grow, roots, the marks that detect an OS
 *	  crash, corrupt and truncated headers (clear error, never a crash),
 *	  persistence counters.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char path[600];

static pm_pool *
make_pool(pm_mode mode, pm_error *err)
{
	pm_pool_create_opts o = {0};
	pm_pool    *pool = NULL;

	o.owner.relfilenode = 4242;
	o.owner.database = 5;
	o.owner.kind = PM_KIND_TEST;
	o.mode = mode;
	o.max_size = 64 << 20;
	o.replace = true;
	pm_pool_create(path, &o, &pool, err);
	return pool;
}

/* Overwrite len bytes at off of the closed pool file. */
static void
poke(off_t off, const void *bytes, size_t len)
{
	int			fd = open(path, O_WRONLY);

	if (fd < 0 || pwrite(fd, bytes, len, off) != (ssize_t) len)
		tap_diag("poke failed: %s", strerror(errno));
	close(fd);
}

static void
expect_open_error(pm_errcode want, const char *what, const char *needle)
{
	pm_error	err = {0};
	pm_pool    *pool = NULL;
	pm_errcode	rc = pm_pool_open(path, PM_MODE_EADR, &pool, &err);

	tap_ok(rc == want && pool == NULL && strstr(err.msg, path) != NULL &&
		   strstr(err.msg, needle) != NULL,
		   "%s: %s (\"%s\")", what, pm_errcode_name(want), err.msg);
	pm_pool_close(pool);
}

/* Pretend the kernel booted as boot_id (NULL: the boot id cannot be read). */
static void
set_boot(const char *dir, const char *boot_id)
{
	static char file[700];
	FILE	   *f;

	snprintf(file, sizeof(file), "%s/boot_id", dir);
	setenv("PM_INDEX_BOOT_ID_FILE", file, 1);
	unlink(file);
	if (boot_id != NULL && ((f = fopen(file, "w")) == NULL || fprintf(f, "%s\n", boot_id) < 0 ||
							fclose(f) != 0))
		tap_diag("could not write %s: %s", file, strerror(errno));
}

static bool
header_is(bool clean, uint64_t boot)
{
	pm_pool_header hdr;
	pm_error	err = {0};

	return pm_pool_read_header(path, &hdr, NULL, &err) == PM_OK &&
		hdr.clean_shutdown == (clean ? PM_POOL_CLEAN : PM_POOL_IN_USE) && hdr.writer_boot == boot;
}

/* The marks that tell an OS crash from a process crash (pool.h). */
static void
test_os_crash_marks(const char *dir)
{
	pm_error	err = {0};
	pm_pool    *pool;
	uint64_t	boot_a,
				boot_b;
	bool		marked;

	set_boot(dir, "boot-a");
	boot_a = pm_current_boot();
	set_boot(dir, "boot-b");
	boot_b = pm_current_boot();
	tap_ok(boot_a != 0 && boot_b != 0 && boot_a != boot_b, "boot ids give distinct nonzero tags");

	set_boot(dir, "boot-a");
	pool = make_pool(PM_MODE_EADR, &err);
	tap_ok(pool != NULL && !pool->torn && header_is(false, boot_a),
		   "a new pool on a non-PM file is in use under the boot that created it");
	pm_pool_close(pool);

	/* a process crash: same boot, still in use, trusted */
	tap_ok(pm_pool_open(path, PM_MODE_EADR, &pool, &err) == PM_OK && !pool->torn,
		   "reopened in the same boot it is not torn");
	pm_pool_close(pool);

	/* an OS crash: in use under another boot; the verdict sticks, in any mode */
	set_boot(dir, "boot-b");
	tap_ok(pm_pool_open(path, PM_MODE_EADR, &pool, &err) == PM_OK && pool->torn &&
		   header_is(false, boot_a), "in use under another boot: torn, header left as it was");
	pm_pool_close(pool);
	tap_ok(pm_pool_open(path, PM_MODE_MSYNC, &pool, &err) == PM_OK && pool->torn &&
		   header_is(false, boot_a), "an msync open does not clear the verdict");
	pm_pool_close(pool);
	tap_ok(pm_pool_file_close_clean(path, &marked, &err) == PM_OK && !marked &&
		   header_is(false, boot_a), "a torn pool is never marked clean");

	/* a clean shutdown, then a reboot: trusted, and marked under the new boot at open */
	set_boot(dir, "boot-a");
	tap_ok(pm_pool_file_close_clean(path, &marked, &err) == PM_OK && marked &&
		   header_is(true, boot_a), "closed clean in its own boot");
	set_boot(dir, "boot-b");
	tap_ok(pm_pool_open(path, PM_MODE_EADR, &pool, &err) == PM_OK && !pool->torn &&
		   header_is(false, boot_b), "after a clean close a new boot trusts it and marks it in use");
	pm_pool_close(pool);

	/* durable storage (msync here) writes back and marks clean: an OS crash loses nothing */
	tap_ok(pm_pool_open(path, PM_MODE_MSYNC, &pool, &err) == PM_OK && !pool->torn &&
		   header_is(true, boot_b), "an msync open writes back and marks the pool clean");
	pm_pool_close(pool);
	set_boot(dir, "boot-c");
	tap_ok(pm_pool_open(path, PM_MODE_MSYNC, &pool, &err) == PM_OK && !pool->torn &&
		   header_is(true, boot_b), "so the next boot trusts it");
	pm_pool_close(pool);

	/* where the boot id cannot be read, nothing is ever judged torn */
	set_boot(dir, NULL);
	tap_ok(pm_current_boot() == 0 && pm_pool_open(path, PM_MODE_EADR, &pool, &err) == PM_OK &&
		   !pool->torn && header_is(false, 0), "an unknown boot marks 0 and judges nothing torn");
	pm_pool_close(pool);
	unsetenv("PM_INDEX_BOOT_ID_FILE");
}

int
main(void)
{
	char	   *dir = tap_tmpdir("pool");
	pm_error	err = {0};
	pm_pool    *pool;
	pm_pool_header hdr;
	uint64_t	fsize;
	uint8_t		uuid[16];
	bool		weak;

	tap_plan(55);
	snprintf(path, sizeof(path), "%s/pool.pm", dir);

	/* create and reopen */
	pool = make_pool(PM_MODE_EADR, &err);
	tap_ok(pool != NULL, "create pool (%s)", pool ? "ok" : err.msg);
	if (pool == NULL)
		return 1;
	tap_ok(pm_pool_size(pool) == PM_POOL_HEADER_SIZE + PM_POOL_CHUNK_SIZE,
		   "new pool has one chunk");
	memcpy(uuid, pool->hdr->uuid, 16);
	tap_ok((uuid[6] >> 4) == 4, "uuid is version 4");
	*(uint64_t *) pm_pool_addr(pool, PM_POOL_HEADER_SIZE + 64) = 0xfeedfacecafebeefULL;
	pm_pool_set_root(pool, 3, PM_POOL_HEADER_SIZE + 64);
	tap_ok(pm_pool_off(pool, pm_pool_addr(pool, 12345)) == 12345, "offset <-> address round trip");
	pm_pool_close(pool);

	tap_ok(pm_pool_open(path, PM_MODE_EADR, &pool, &err) == PM_OK, "reopen");
	tap_ok(memcmp(pool->hdr->uuid, uuid, 16) == 0 && pool->hdr->owner.relfilenode == 4242 &&
		   pool->hdr->owner.database == 5, "uuid and owner survive reopen");
	tap_ok(pm_pool_root(pool, 3) == PM_POOL_HEADER_SIZE + 64 &&
		   *(uint64_t *) pm_pool_addr(pool, pm_pool_root(pool, 3)) == 0xfeedfacecafebeefULL,
		   "root and data survive reopen");
	tap_ok(pool->hdr->host_position == 0, "a new pool's host position is 0");
	pm_pool_set_host_position(pool, 0x1234abcdULL);
	pm_pool_set_flag(pool, PM_POOL_FLAG_BUILDING);
	pm_pool_set_flag(pool, PM_POOL_FLAG_UNTRUSTED);
	pm_pool_clear_flag(pool, PM_POOL_FLAG_UNTRUSTED);
	pm_pool_close(pool);

	/* a copy made elsewhere keeps its UUID; the host position persists */
	{
		pm_pool_create_opts o = {0};
		char		copy[700];
		pm_pool    *c = NULL;

		snprintf(copy, sizeof(copy), "%s.copy", path);
		o.owner.kind = PM_KIND_TEST;
		o.mode = PM_MODE_EADR;
		o.uuid = uuid;
		o.flags = PM_POOL_FLAG_BUILDING;
		tap_ok(pm_pool_create(copy, &o, &c, &err) == PM_OK && memcmp(c->hdr->uuid, uuid, 16) == 0 &&
			   c->hdr->flags == PM_POOL_FLAG_BUILDING,
			   "a pool created with a given UUID and flags has them");
		pm_pool_close(c);
		unlink(copy);
	}
	tap_ok(pm_pool_open(path, PM_MODE_EADR, &pool, &err) == PM_OK &&
		   pool->hdr->host_position == 0x1234abcdULL, "the host position survives reopen");
	tap_ok(pool->hdr->flags == PM_POOL_FLAG_BUILDING,
		   "a flag set persists, and clearing one leaves the others");

	/* grow; the new space is usable at once, through the same base address */
	{
		char	   *base = pool->base;
		uint64_t	want = PM_POOL_HEADER_SIZE + 5 * PM_POOL_CHUNK_SIZE;
		struct stat st;

		tap_ok(pm_pool_grow(pool, want, &err) == PM_OK && pm_pool_size(pool) >= want,
			   "grow to five chunks");
		memset(pm_pool_addr(pool, want - 4096), 0x5a, 4096);
		tap_ok(pool->base == base && stat(path, &st) == 0 && (uint64_t) st.st_size >= want &&
			   st.st_blocks * 512 >= (long) want - PM_POOL_HEADER_SIZE,
			   "growth allocates real blocks and keeps the base address");
		tap_ok(pm_pool_grow(pool, (uint64_t) 1 << 40, &err) == PM_ERR_POOL_MAX,
			   "growth past the maximum size is refused: %s", err.msg);
	}

	/*
	 * Windows: a second open stands for another process.  It maps room past
	 * the size, not the maximum; when the first grows the pool past that
	 * room, the second reads the new part through an extent without moving
	 * what it mapped, and a remap folds the extents into one window.
	 */
	{
		pm_pool    *other = NULL;
		char	   *other_base;
		uint64_t	far;
		uint64_t   *word;

		if (pm_pool_open(path, PM_MODE_EADR, &other, &err) != PM_OK)
		{
			tap_ok(false, "open a second time: %s", err.msg);
			return 1;
		}
		tap_ok(pm_pool_mapped(other) <= 2 * pm_pool_size(other) + PM_POOL_MIN_HEADROOM + PM_POOL_CHUNK_SIZE &&
			   pm_pool_mapped(other) < other->max_size,
			   "a process maps its pool's size plus room, not the maximum size (%llu of %llu bytes)",
			   (unsigned long long) pm_pool_mapped(other), (unsigned long long) other->max_size);
		other_base = other->base;
		far = pm_pool_mapped(other) + 3 * PM_POOL_CHUNK_SIZE;
		tap_ok(pm_pool_grow(pool, far + PM_POOL_CHUNK_SIZE, &err) == PM_OK,
			   "the pool grows past the other process's mapping");
		*(uint64_t *) pm_pool_addr(pool, far) = 0x0ddba11ULL;
		word = pm_pool_addr(other, far);
		tap_ok(*word == 0x0ddba11ULL && other->base == other_base && other->nextents == 1,
			   "the other process reads the new part through an extent; its window stays");
		tap_ok(pm_pool_off(other, word) == far, "offset <-> address round trip in an extent");
		tap_ok(pm_pool_remap(other, &err) == PM_OK && other->nextents == 0 &&
			   other->window > far && *(uint64_t *) pm_pool_addr(other, far) == 0x0ddba11ULL,
			   "a remap folds the extents into one window with room to grow");
		pm_pool_close(other);
	}
	pm_pool_close(pool);
	{
		bool		marked;

		tap_ok(pm_pool_file_close_clean(path, &marked, &err) == PM_OK && marked &&
			   pm_pool_read_header(path, &hdr, &fsize, &err) == PM_OK &&
			   hdr.clean_shutdown == PM_POOL_CLEAN &&
			   hdr.size >= PM_POOL_HEADER_SIZE + 5 * PM_POOL_CHUNK_SIZE,
			   "header readable without mapping; clean marker and size persisted");
	}

	/* a pool others may write, or that belongs to another user, is refused */
	{
		pm_pool    *p2 = NULL;

		chmod(path, 0660);
		tap_ok(pm_pool_open(path, PM_MODE_EADR, &p2, &err) == PM_ERR_OWNERSHIP && p2 == NULL &&
			   strstr(err.msg, "writable by group or others (mode 0660)") != NULL,
			   "a group-writable pool is refused: %s", err.msg);
		chmod(path, 0600);
		if (geteuid() == 0)
		{
			tap_ok(chown(path, 65534, (gid_t) -1) == 0 &&
				   pm_pool_read_header(path, &hdr, NULL, &err) == PM_ERR_OWNERSHIP &&
				   strstr(err.msg, "is owned by user ID 65534") != NULL,
				   "another user's pool is refused: %s", err.msg);
			tap_ok(chown(path, geteuid(), (gid_t) -1) == 0, "chown back");
		}
		else
		{
			tap_skip("chown needs root");
			tap_skip("chown needs root");
		}
		tap_ok(pm_pool_open(path, PM_MODE_EADR, &p2, &err) == PM_OK,
			   "with owner and mode fixed it opens again");
		pm_pool_close(p2);
	}

	/* a create over an existing file without replace fails */
	{
		pm_pool_create_opts o = {0};
		pm_pool    *p2 = NULL;

		o.mode = PM_MODE_EADR;
		tap_ok(pm_pool_create(path, &o, &p2, &err) == PM_ERR_EXISTS && p2 == NULL,
			   "create refuses to overwrite: %s", err.msg);
	}

	/* persistence counters */
	{
		pm_pool    *p = make_pool(PM_MODE_ADR, &err);
		pm_counters before = pm_tls_counters;
		char	   *a = pm_pool_addr(p, PM_POOL_HEADER_SIZE);

		pm_persist(&p->persist, a + 10, 100);	/* lines 0..1 */
		tap_ok(pm_tls_counters.flushes - before.flushes == 2 &&
			   pm_tls_counters.fences - before.fences == 1, "adr: 2 lines flushed, 1 fence");
		pm_pool_close(p);
		p = make_pool(PM_MODE_EADR, &err);
		before = pm_tls_counters;
		pm_persist(&p->persist, pm_pool_addr(p, PM_POOL_HEADER_SIZE), 4096);
		tap_ok(pm_tls_counters.flushes == before.flushes &&
			   pm_tls_counters.fences - before.fences == 1, "eadr: no flush, 1 fence");
		pm_pool_close(p);
		p = make_pool(PM_MODE_MSYNC, &err);
		before = pm_tls_counters;
		pm_persist(&p->persist, pm_pool_addr(p, PM_POOL_HEADER_SIZE), 64);
		tap_ok(pm_tls_counters.flushes - before.flushes == 1, "msync: range counted");
		pm_pool_close(p);
	}

	test_os_crash_marks(dir);

	/* mode resolution */
	tap_ok(pm_mode_resolve(PM_MODE_AUTO, true, true, &weak) == PM_MODE_EADR && !weak &&
		   pm_mode_resolve(PM_MODE_AUTO, true, false, &weak) == PM_MODE_ADR && !weak &&
		   pm_mode_resolve(PM_MODE_AUTO, false, false, &weak) == PM_MODE_EADR && weak &&
		   pm_mode_resolve(PM_MODE_MSYNC, false, false, &weak) == PM_MODE_MSYNC,
		   "auto resolves to eadr/adr on PM, eadr (weak) elsewhere");
	{
		pm_mode		m;

		tap_ok(pm_mode_parse("adr", &m) && m == PM_MODE_ADR && !pm_mode_parse("bogus", &m),
			   "mode names parse");
	}

	/* corruption: each damaged header is a clear error naming the file */
	pool = make_pool(PM_MODE_EADR, &err);
	pm_pool_close(pool);
	poke(0, "XXXX", 4);
	expect_open_error(PM_ERR_CORRUPT, "bad magic", "no pm_index pool header");

	pool = make_pool(PM_MODE_EADR, &err);
	pm_pool_close(pool);
	{
		uint32_t	v = 99;

		poke(offsetof(pm_pool_header, format_version), &v, sizeof(v));
	}
	expect_open_error(PM_ERR_VERSION, "future format version", "format version 99");

	pool = make_pool(PM_MODE_EADR, &err);
	pm_pool_close(pool);
	poke(offsetof(pm_pool_header, owner) + 8, "\x01", 1);
	expect_open_error(PM_ERR_CORRUPT, "flipped owner byte", "checksum");

	pool = make_pool(PM_MODE_EADR, &err);
	pm_pool_close(pool);
	{
		uint64_t	bogus = 12345;

		poke(offsetof(pm_pool_header, size), &bogus, sizeof(bogus));
	}
	expect_open_error(PM_ERR_CORRUPT, "bad size word", "size word");

	pool = make_pool(PM_MODE_EADR, &err);
	pm_pool_close(pool);
	{
		uint64_t	bogus = 7;

		poke(offsetof(pm_pool_header, roots) + 8, &bogus, sizeof(bogus));
	}
	expect_open_error(PM_ERR_CORRUPT, "bad root offset", "root offset");

	pool = make_pool(PM_MODE_EADR, &err);
	pm_pool_grow(pool, PM_POOL_HEADER_SIZE + 3 * PM_POOL_CHUNK_SIZE, &err);
	pm_pool_close(pool);
	tap_ok(truncate(path, PM_POOL_HEADER_SIZE + PM_POOL_CHUNK_SIZE) == 0, "truncate pool file");
	expect_open_error(PM_ERR_CORRUPT, "truncated data", "truncated");
	tap_ok(truncate(path, 100) == 0, "truncate into the header");
	expect_open_error(PM_ERR_CORRUPT, "truncated header", "truncated");

	/* opening while another process grows the pool never sees a false truncation */
	{
		pid_t		child;
		int			failures = 0;
		int			opens = 0;

		pool = make_pool(PM_MODE_EADR, &err);
		pm_pool_close(pool);
		child = fork();
		if (child == 0)
		{
			pm_pool    *p;

			if (pm_pool_open(path, PM_MODE_EADR, &p, &err) != PM_OK)
				_exit(2);
			for (uint64_t sz = 2; sz < 200; sz++)
				pm_pool_grow(p, PM_POOL_HEADER_SIZE + sz * PM_POOL_CHUNK_SIZE, &err);
			_exit(0);
		}
		for (int status = 0; waitpid(child, &status, WNOHANG) == 0; opens++)
		{
			pm_pool    *p;

			if (pm_pool_open(path, PM_MODE_EADR, &p, &err) != PM_OK)
			{
				if (failures++ == 0)
					tap_diag("open during growth: %s", err.msg);
			}
			else
				pm_pool_close(p);
		}
		tap_ok(failures == 0, "%d opens during concurrent growth: %d failed", opens, failures);
	}

	unlink(path);
	expect_open_error(PM_ERR_NOTFOUND, "missing file", "No such file");

	/*
	 * A volatile pool (the DRAM tier): a child forked after its creation
	 * grows it far past the window both inherited and writes there; the
	 * parent reads the write through an extent.  Past max_size it is full.
	 */
	{
		pm_pool    *dram = NULL;
		pid_t		child;
		int			status = -1;
		uint64_t	far;

		tap_ok(pm_pool_create_volatile("test DRAM tier", 64 << 20, &dram, &err) == PM_OK &&
			   dram->persist.mode == PM_MODE_VOLATILE && pm_pool_mapped(dram) < (64 << 20),
			   "a volatile pool maps room to grow, not its maximum size");
		far = pm_pool_mapped(dram) + 8 * PM_POOL_CHUNK_SIZE;
		child = fork();
		if (child == 0)
		{
			if (pm_pool_grow(dram, far + PM_POOL_CHUNK_SIZE, &err) != PM_OK)
				_exit(2);
			*(uint64_t *) pm_pool_addr(dram, far) = 0xd4a3ULL;
			_exit(0);
		}
		waitpid(child, &status, 0);
		tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && pm_pool_size(dram) > far &&
			   *(uint64_t *) pm_pool_addr(dram, far) == 0xd4a3ULL,
			   "a child's growth and write are seen by the parent");
		tap_ok(pm_pool_grow(dram, (uint64_t) 1 << 30, &err) == PM_ERR_ARENA_FULL,
			   "growth past its maximum size: %s", err.msg);
		pm_pool_close(dram);
	}

	tap_rmdir(dir);
	return tap_done();
}
