"""A MediaWiki store for one dump: SQLite, the dump's templates and modules imported once.

:func:`prepare_store` installs MediaWiki on SQLite in a folder (``maintenance/install.php``,
the dump's content language), enables :data:`~wikiorigin.render.mediawiki.EXTENSIONS`, and
imports the pages of :data:`~wikiorigin.render.mediawiki.STORE_NAMESPACES` (templates, Lua
modules, interface messages) from the dump (``maintenance/importDump.php``). The folder
records what it was made from (``store.json``): the next run on the same dump reuses it; a
changed dump or engine makes a new one. Articles are never imported: they are rendered.
"""

from __future__ import annotations

import bz2
import html
import json
import re
import secrets
import shutil
import subprocess
from pathlib import Path

from ..dumps.pages import Multistream
from ..errors import WikioriginError
from ..log import logger
from .mediawiki import EXTENSIONS, STORE_NAMESPACES, MediaWiki

__all__ = ["STORE_FORMAT", "prepare_store", "store_pages"]

STORE_FORMAT = 4
"""Version of a store's layout and settings: a store of another format is made again."""

_SETTINGS = """
# wikiorigin: the extensions a wiki's templates need; tags and functions of extensions not here
# (maps, graphs, styles, Wikidata, coordinates) give no text; math keeps its source
{loads}
$wgScribuntoDefaultEngine = 'luasandbox';
$wgScribuntoEngineConf['luasandbox']['cpuLimit'] = 10;
$wgCapitalLinks = {capital};
$wgExtensionMessagesFiles['WikioriginStubs'] = __DIR__ . '/stubs.magic.php';
$wgHooks['ParserFirstCallInit'][] = static function ( $parser ) {{
\t$none = static function () {{ return ''; }};
\tforeach ( [ {tags} ] as $tag ) {{
\t\t$parser->setHook( $tag, $none );
\t}}
\tforeach ( [ 'math', 'chem', 'ce' ] as $tag ) {{
\t\t$parser->setHook( $tag, static function ( $in ) {{ return htmlspecialchars( (string)$in ); }} );
\t}}
\tforeach ( [ 'syntaxhighlight', 'source' ] as $tag ) {{
\t\t$parser->setHook( $tag, static function ( $in ) {{ return '<pre>' . htmlspecialchars( (string)$in ) . '</pre>'; }} );
\t}}
\tforeach ( [ {functions} ] as $name ) {{
\t\t$parser->setFunctionHook( $name, $none );
\t}}
}};
"""
_STUB_TAGS = (
    *("templatestyles", "mapframe", "maplink", "graph", "timeline", "section", "imagemap", "score"),
    *("indicator", "hiero", "inputbox", "categorytree", "charinsert", "templatedata", "rss", "phonos"),
)  # tags of extensions not enabled: no text (code: syntaxhighlight and source, math: kept as written)
_STUB_FUNCTIONS = (
    *("coordinates", "property", "statements", "related", "chart", "categorytree"),
    *("lst", "lsth", "lstx", "section", "section-h", "section-x"),  # labelled sections, by either name
)  # parser functions of extensions not enabled ({{#chart:...}}): no text, not their wikitext
_DATA_DIR = re.compile(r"^\$wgSQLiteDataDir = .*$", re.M)
_LANG = re.compile(rb'xml:lang="([A-Za-z0-9-]+)"')
_BAD_NAME = re.compile(r"[#<>\[\]|{}:/\\\x00-\x1f]")


def _language(dump: Multistream) -> str:
    """The dump's content language (``xml:lang`` of its ``<mediawiki>``), else English."""
    with open(dump.dump, "rb") as f:
        head = bz2.BZ2Decompressor().decompress(f.read(1 << 16))
    found = _LANG.search(head)
    return found.group(1).decode() if found else "en"


def store_pages(dump: Multistream) -> list[str]:
    """Titles of the dump's pages a store imports (:data:`STORE_NAMESPACES`, by the index)."""
    prefixes = {"Template:", "Module:", "MediaWiki:"}
    prefixes |= {f"{dump.site.namespaces[n]}:" for n in STORE_NAMESPACES if dump.site.namespaces.get(n)}
    return [t for t in dump.titles() if t.split(":", 1)[0] + ":" in prefixes]


def _import_xml(dump: Multistream, path: Path, batch: int = 2000) -> int:
    """Write the store's pages as a pages-articles export MediaWiki imports, ``batch`` pages
    read at a time (a large wiki has a million templates); their number."""
    titles = store_pages(dump)
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n<siteinfo>\n')
        out.write(f"<dbname>{html.escape(dump.site.dbname)}</dbname>\n<case>{dump.site.case}</case>\n<namespaces>\n")
        for key, name in sorted(dump.site.namespaces.items()):
            out.write(f'<namespace key="{key}" case="first-letter">{html.escape(name or "")}</namespace>\n')
        out.write("</namespaces>\n</siteinfo>\n")
        for start in range(0, len(titles), batch):
            pages = dump.get(titles[start : start + batch], follow_redirects=False)
            for page in pages.values():
                out.write(_page_xml(page))
            count += len(pages)
        out.write("</mediawiki>\n")
    return count


def _page_xml(page) -> str:
    stamp = page.revision_timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"<page><title>{html.escape(page.title)}</title><ns>{page.namespace}</ns><id>{page.page_id}</id>"
        f"<revision><id>{page.revision_id}</id><timestamp>{stamp}</timestamp>"
        f'<contributor><username>dump</username></contributor><text xml:space="preserve">'
        f"{html.escape(page.text, quote=False)}</text></revision></page>\n"
    )


def _stamp(dump: Multistream, engine: MediaWiki) -> dict:
    stat = dump.dump.stat()
    return {
        "format": STORE_FORMAT,
        "dump": dump.dump.name,
        "size": stat.st_size,
        "mtime": int(stat.st_mtime),
        "mediawiki": engine.version,
    }


def _run(engine: MediaWiki, args: list[str], what: str, **kw) -> None:
    done = subprocess.run([engine.php, *args], capture_output=True, text=True, **kw)
    if done.returncode:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise WikioriginError(f"{what} failed (exit {done.returncode}): {last[0]}")


def _site_name(dump: Multistream) -> str:
    """The wiki's name as its header gives it (``{{SITENAME}}``, the project namespace), when
    install.php takes it; else "Wiki"."""
    name = dump.site.sitename.strip()
    return name if name and not _BAD_NAME.search(name) else "Wiki"


def _install(engine: MediaWiki, where: Path, dump: Multistream) -> None:
    language = _language(dump)
    (where / "db").mkdir(parents=True)
    maintenance = engine.home / "maintenance"
    args = [str(maintenance / "install.php"), "--dbtype", "sqlite", "--dbpath", str(where / "db")]
    args += ["--dbname", "wiki", "--confpath", str(where), "--lang", language, "--server", "http://localhost"]
    args += ["--scriptpath", "", "--skins", "", "--pass", secrets.token_hex(12), _site_name(dump), "wikiorigin"]
    _run(engine, args, f"{where}: MediaWiki's install.php")
    settings = where / "LocalSettings.php"
    text = _DATA_DIR.sub("$wgSQLiteDataDir = __DIR__ . '/db';", settings.read_text(encoding="utf-8"))
    loads = "\n".join(f"wfLoadExtension( '{name}' );" for name in EXTENSIONS)
    tags, functions = (", ".join(f"'{x}'" for x in names) for names in (_STUB_TAGS, _STUB_FUNCTIONS))
    capital = "false" if dump.site.case == "case-sensitive" else "true"  # Wiktionary's titles keep their case
    settings.write_text(
        text + _SETTINGS.format(loads=loads, tags=tags, functions=functions, capital=capital), encoding="utf-8"
    )
    magic = ", ".join(f"'{x}' => [ 0, '{x}' ]" for x in _STUB_FUNCTIONS)
    (where / "stubs.magic.php").write_text(f"<?php\n$magicWords = [ 'en' => [ {magic} ] ];\n", encoding="utf-8")


def prepare_store(dump: Multistream, where, engine: MediaWiki) -> Path:
    """The store of ``dump`` in the folder ``where``: reused when it was made from this dump
    and engine, else made anew (install, then the dump's templates and modules imported)."""
    where = Path(where)
    stamp = _stamp(dump, engine)
    try:
        if json.loads((where / "store.json").read_text(encoding="utf-8")) == stamp:
            return where
    except (OSError, ValueError):
        pass
    logger.info("%s: setting up MediaWiki's store for %s", where, dump.dump.name)
    building = where.with_name(where.name + ".partial")
    shutil.rmtree(building, ignore_errors=True)
    _install(engine, building, dump)
    xml = building / "import.xml"
    count = _import_xml(dump, xml)
    conf = ["--conf", str(building / "LocalSettings.php")]  # --no-updates: no link tables, which rendering never reads
    _run(
        engine,
        [str(engine.home / "maintenance" / "importDump.php"), "--no-updates", *conf, str(xml)],
        f"{xml}: importDump.php",
    )
    xml.unlink()
    (building / "store.json").write_text(json.dumps(stamp), encoding="utf-8")
    shutil.rmtree(where, ignore_errors=True)
    building.rename(where)
    logger.info("%s: %d templates, modules and messages imported", where, count)
    return where
