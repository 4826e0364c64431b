"""Synthetic MariaDB ``page_props`` dumps, as :mod:`wikiorigin.dumps.sql` reads them."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator

__all__ = ["page_props_rows", "write_page_props_sql"]

_ESCAPES = (("\\", "\\\\"), ("'", "\\'"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\0", "\\0"))


def page_props_rows(n: int, seed: int = 0) -> Iterator[tuple[int, str, bytes]]:
    """``n`` page_props rows ``(page, propname, value)``: about two in five are a
    ``wikibase_item``; short descriptions carry quotes, a backslash and a newline."""
    rng = random.Random(seed)
    props = ("wikibase_item", "page_image_free", "wikibase-shortdesc", "defaultsort")
    page = 1
    for _ in range(n):
        prop = rng.choices(props, (40, 25, 25, 10))[0]
        if prop == "wikibase_item":
            value = f"Q{rng.randrange(1, 10**8)}".encode()
        elif prop == "wikibase-shortdesc":
            value = f'It\'s a \\ "short" description\nof {page}'.encode()
        else:
            value = f"File_{page}.jpg".encode()
        yield page, prop, value
        page += rng.randrange(0, 3)


def _sql_string(value: bytes) -> str:
    text = value.decode("utf-8")
    for a, b in _ESCAPES:
        text = text.replace(a, b)
    return f"'{text}'"


def write_page_props_sql(out, rows: Iterable[tuple[int, str, bytes]], rows_per_insert: int = 2000) -> None:
    """Write ``(page, propname, value)`` rows as a MariaDB ``page_props`` dump (text file ``out``),
    ``rows_per_insert`` rows per ``INSERT`` statement."""
    out.write(
        "/*M!999999\\- enable the sandbox mode */ \n"
        "-- MariaDB dump 10.19-11.4.5-MariaDB, for debian-linux-gnu (x86_64)\n--\n"
        "-- Host: db1234    Database: testwiki\n"
        "DROP TABLE IF EXISTS `page_props`;\n"
        "CREATE TABLE `page_props` (\n"
        "  `pp_page` int(10) unsigned NOT NULL,\n"
        "  `pp_propname` varbinary(60) NOT NULL,\n"
        "  `pp_value` blob NOT NULL,\n"
        "  `pp_sortkey` float DEFAULT NULL,\n"
        "  PRIMARY KEY (`pp_page`,`pp_propname`)\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;\n\n"
        "LOCK TABLES `page_props` WRITE;\n"
    )
    batch = []
    for page, prop, value in rows:
        sortkey = "NULL" if prop != "page_image_free" else "0"
        batch.append(f"({page},'{prop}',{_sql_string(value)},{sortkey})")
        if len(batch) == rows_per_insert:
            out.write("INSERT INTO `page_props` VALUES " + ",".join(batch) + ";\n")
            batch = []
    if batch:
        out.write("INSERT INTO `page_props` VALUES " + ",".join(batch) + ";\n")
    out.write("UNLOCK TABLES;\n")
