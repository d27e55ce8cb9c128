/*
 * ord_include.c
 *	  INCLUDE columns: their values kept as host bytes after the key
 *	  column's.
 */
#include "ord_key.h"

#include "access/detoast.h"
#include "utils/datum.h"

/* The values of an index's INCLUDE columns, appended to buf (datumSerialize). */
void
ord_append_included(const OrdColumn *col, const Datum *values, const bool *isnull, StringInfo buf)
{
	Datum	   *own = palloc(sizeof(Datum) * col->natts);
	Size		size = 0;
	char	   *at;

	for (int i = col->nkeys; i < col->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(col->desc, i);

		/* a value stored in TOAST comes along whole, as in an index tuple */
		own[i] = values[i];
		if (!isnull[i] && att->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
			own[i] = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(values[i])));
		size += datumEstimateSpace(own[i], isnull[i], att->attbyval, att->attlen);
	}
	enlargeStringInfo(buf, size);
	at = buf->data + buf->len;
	for (int i = col->nkeys; i < col->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(col->desc, i);

		datumSerialize(own[i], isnull[i], att->attbyval, att->attlen, &at);
	}
	buf->len += size;
	buf->data[buf->len] = '\0';
	pfree(own);
}

/* The INCLUDE columns' values ord_append_included wrote at included. */
void
ord_read_included(const OrdColumn *col, const char *included, Datum *values, bool *isnull)
{
	for (int i = col->nkeys; i < col->natts; i++)
	{
		char	   *at = (char *) included;

		values[i] = datumRestore(&at, &isnull[i]);	/* a copy in palloc'd
													 * memory */
		included = at;
	}
}

/*
 * The entry of a one-column index with INCLUDE columns: its key column's
 * string (a narrow key's 8 bytes), then host bytes: the length of the key
 * column's and its own, then the INCLUDE columns' values.
 */
OrdKey
ord_included_key(const OrdColumn *col, const Datum *values, const bool *isnull, uint64 rest)
{
	StringInfoData buf;
	StringInfoData key;
	int			keylen = 8;
	OrdKey		k;

	initStringInfo(&key);
	if (!isnull[0] && ord_class_of(col->type) == KEY_BYTES)
		ord_value_string(col, col->type, values[0], &key, &keylen);
	else
		ord_append_uint64(&key, isnull[0] ? ORD_NULL_KEY : ord_encode(col->type, values[0]));
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, key.data, keylen);
	ord_append_uint32(&buf, (uint32) (key.len - keylen));
	appendBinaryStringInfo(&buf, key.data + keylen, key.len - keylen);
	ord_append_included(col, values, isnull, &buf);
	k = ord_key_of_string((const uint8 *) buf.data, keylen, buf.len, rest, true);
	pfree(key.data);
	pfree(buf.data);
	return k;
}
