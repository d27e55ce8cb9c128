/*
 * ord_column.c
 *	  What an index's key column is (OrdColumn), the checks of a new index's
 *	  columns, and its format parameter.
 */
#include "ord_key.h"

#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

/*
 * A multicolumn index orders its entries by the bytes of their segments,
 * and a libc collation's strings have no bytes that order them (see
 * ord_by_libc): refused.
 */
static void
check_libc_columns(const OrdColumn *col, const char *amname)
{
	for (int c = 0; c < col->nkeys && col->nkeys > 1; c++)
		if (ord_by_libc(&col->keys[c]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s does not support multicolumn indexes with a column in collation \"%s\"",
							amname, get_collation_name(col->keys[c].collation)),
					 errdetail("Strings in a libc collation other than \"C\" are ordered by the "
							   "collation's comparison function, which only single-column indexes do."),
					 errhint("Give the column COLLATE \"C\" or an ICU collation, index it alone, or use btree.")));
}

/*
 * Refuse an index the access method (amname; wide_keys: it takes wide keys)
 * cannot order as btree would: a type without an encoding, a byte-string
 * type, several key columns or INCLUDE columns without wide keys; a pattern
 * operator class in a nondeterministic collation, as btree's.
 */
void
ord_check_column(Relation index, const char *amname, bool wide_keys)
{
	OrdColumn	col = ord_column(index);

	for (int c = 0; c < col.nkeys; c++)
	{
		const OrdColumn *k = col.nkeys > 1 ? &col.keys[c] : &col;
		Oid			type = k->type;

		/* as index_create refuses btree's pattern operator classes */
		if (k->by_bytes && OidIsValid(k->collation) && !get_collation_isdeterministic(k->collation))
		{
			bool		isnull;
			oidvector  *indclass = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID,
																				 index->rd_indextuple,
																				 Anum_pg_index_indclass,
																				 &isnull));

			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("nondeterministic collations are not supported for operator class \"%s\"",
							generate_opclass_name(indclass->values[c]))));
		}

		if (!ord_type_supported(type) || (ord_type_wide(type) && !wide_keys))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("%s does not support type %s", amname, format_type_be(type)),
					 ord_type_wide(type) ?
					 errdetail("Its keys are longer than the 8 bytes %s takes.", amname) : 0));
	}
	check_libc_columns(&col, amname);
	if (col.nkeys > 1 && !wide_keys)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support multicolumn indexes", amname),
				 errdetail("Its keys are the 8 bytes of one column."),
				 errhint("Index one column, or use an access method that takes several.")));
	if (col.natts > col.nkeys && !wide_keys)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support INCLUDE columns", amname),
				 errdetail("Its entries are 16 bytes and keep nothing more."),
				 errhint("Index the columns without INCLUDE, or use an access method that keeps them.")));
}

/*
 * Whether an operator family orders strings by their bytes whatever their
 * collation: the pattern operator classes (text_pattern_ops,
 * varchar_pattern_ops, bpchar_pattern_ops), whose comparison function is
 * btree's bytewise one.
 */
static bool
family_orders_bytes(Oid opfamily, Oid type)
{
	RegProcedure cmp;

	if (type != TEXTOID && type != BPCHAROID)
		return false;
	cmp = get_opfamily_proc(opfamily, type, type, 1);	/* btree's ORDER proc */
	return cmp == F_BTTEXT_PATTERN_CMP || cmp == F_BTBPCHAR_PATTERN_CMP;
}

/*
 * Key column c: keys encode from the operator class's input type, which is
 * the column's type or one it is binary-coercible to (varchar's text, a
 * domain's base type).
 */
static OrdColumn
key_column(Relation index, int c)
{
	OrdColumn	col;

	col.type = index->rd_opcintype[c];
	col.opfamily = index->rd_opfamily[c];
	col.typmod = TupleDescAttr(RelationGetDescr(index), c)->atttypmod;
	col.collation = index->rd_indcollation[c];
	col.by_bytes = !OidIsValid(col.collation) || pmi_collation_is_c(col.collation) ||
		family_orders_bytes(col.opfamily, col.type);
	col.locale = col.by_bytes ? NULL : pg_newlocale_from_collation(col.collation);
	col.order = ord_by_libc(&col) ? ord_libc_order_of_collation(col.collation) : NULL;
	col.descending = (index->rd_indoption[c] & INDOPTION_DESC) != 0;
	col.nulls_first = (index->rd_indoption[c] & INDOPTION_NULLS_FIRST) != 0;
	col.natts = 1;
	col.nkeys = 1;
	col.keys = NULL;
	col.desc = NULL;
	return col;
}

OrdColumn
ord_column(Relation index)
{
	OrdColumn	col = key_column(index, 0);
	const OrdAm *am = ord_am(pmi_index_am(index));

	col.record_max = am->ord.record_max > 0 ? am->ord.record_max : ORD_WIDE_MAX;
	col.amname = am->am.amname;
	col.natts = IndexRelationGetNumberOfAttributes(index);
	col.nkeys = IndexRelationGetNumberOfKeyAttributes(index);
	col.desc = RelationGetDescr(index);
	if (col.nkeys > 1)
	{
		col.order = NULL;		/* segments order by their bytes */
		col.keys = palloc(sizeof(OrdColumn) * col.nkeys);
		for (int c = 0; c < col.nkeys; c++)
			col.keys[c] = key_column(index, c);
	}
	return col;
}

/*
 * The format parameter of an ordered index (PmiAmOps.format_param): empty,
 * or for a column of strings in a libc collation, ORD_FORMAT_LIBC and the
 * locale's name with its 0x00.
 */
void
ord_format_param(Relation index, PmiFormatParam *param)
{
	OrdColumn	col = key_column(index, 0);
	char	   *name;

	param->len = 0;
	if (IndexRelationGetNumberOfKeyAttributes(index) > 1)
	{
		OrdColumn	all = ord_column(index);

		check_libc_columns(&all, pmi_index_am(index)->amname);
		return;
	}
	if (!ord_by_libc(&col))
		return;
	name = ord_libc_locale_name(col.collation);
	if (strlen(name) + 2 > PMI_FORMAT_PARAM_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("pm_index does not support the locale name \"%s\": it is longer than %d bytes",
						name, PMI_FORMAT_PARAM_MAX - 2)));
	param->data[0] = ORD_FORMAT_LIBC;
	strcpy((char *) param->data + 1, name);
	param->len = strlen(name) + 2;
	pfree(name);
}

/*
 * The order of the records of a pool formatted with param (NULL: memcmp);
 * ERROR if this system lacks its locale or param is not one of
 * ord_format_param's.
 */
const pm_key_order *
ord_order_of_format(const uint8 *param, uint32 len)
{
	if (len == 0)
		return NULL;
	if (param[0] != ORD_FORMAT_LIBC || len < 2 || param[len - 1] != '\0' ||
		strlen((const char *) param + 1) != len - 2)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("pm_index pool holds an unknown key format of %u bytes", len),
				 errhint("REINDEX the index.")));
	return ord_libc_order((const char *) param + 1);
}
