import bz2
import gzip
import lzma

import pytest
import zstandard

from wikiorigin.dumps.compression import detect_format, open_dump
from wikiorigin.errors import DumpError

PAYLOAD = b"<mediawiki>" + b"x" * 300_000 + b"</mediawiki>\n"
WRITERS = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda d: zstandard.ZstdCompressor().compress(d),
    "plain": lambda d: d,
}


def read_all(stream, n=65536):
    out = []
    while chunk := stream.read(n):
        out.append(chunk)
    return b"".join(out)


@pytest.mark.parametrize("fmt", list(WRITERS))
@pytest.mark.parametrize("threads", [1, 2])
def test_opens_by_magic_not_name(tmp_path, fmt, threads):
    path = tmp_path / "misleading.txt"  # the name says nothing
    path.write_bytes(WRITERS[fmt](PAYLOAD))
    with open_dump(path, threads=threads) as stream:
        assert stream.format == fmt
        assert read_all(stream) == PAYLOAD
        assert stream.compressed_pos == stream.compressed_size
        assert stream.pos == len(PAYLOAD)


def test_multistream_bzip2_reads_every_stream(tmp_path):
    path = tmp_path / "multi.bz2"
    path.write_bytes(b"".join(bz2.compress(b"part%d\n" % i) for i in range(50)))
    with open_dump(path, threads=2) as stream:
        assert read_all(stream) == b"".join(b"part%d\n" % i for i in range(50))


def test_real_multistream_sample(data_dir):
    path = data_dir / "elwikivoyage-pages-articles-multistream-p2566p2583.xml.bz2"
    with open_dump(path, threads=2) as stream:
        data = read_all(stream)
    assert data.startswith(b"<mediawiki") and data.rstrip().endswith(b"</mediawiki>")
    assert data.count(b"<page>") == 17


@pytest.mark.parametrize("fmt", ["gzip", "bzip2", "xz", "zstd"])
def test_truncated_file_names_file_and_offset(tmp_path, fmt):
    import random

    rng = random.Random(1)
    payload = bytes(rng.getrandbits(8) for _ in range(400_000))  # incompressible: a big file
    data = WRITERS[fmt](payload)
    path = tmp_path / f"torn.{fmt}"
    path.write_bytes(data[: len(data) * 2 // 3])
    with open_dump(path) as stream:
        with pytest.raises(
            DumpError, match=rf"torn\.{fmt}: {fmt} data is corrupt or truncated near compressed byte \d+"
        ):
            read_all(stream)


def test_corrupt_gzip(tmp_path):
    data = bytearray(gzip.compress(PAYLOAD))
    data[30:40] = b"\xff" * 10
    path = tmp_path / "bad.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(DumpError, match=r"bad\.gz: gzip data is corrupt"):
        with open_dump(path) as stream:
            read_all(stream)


def test_missing_file(tmp_path):
    with pytest.raises(DumpError, match="no such file"):
        open_dump(tmp_path / "nope.xml.gz")


def test_detect_format():
    assert detect_format(b"\x1f\x8b\x08") == "gzip"
    assert detect_format(b"BZh91AY") == "bzip2"
    assert detect_format(b"<mediawiki") == "plain"


def test_only_a_failed_closing_check_is_a_checksum_error(tmp_path):
    """A gzip member that decodes but fails its CRC-32: the data read is unverified
    (ChecksumError); a member cut short is plain damage, everything before it checked by
    the decoder as far as it went."""
    from wikiorigin.dumps.compression import ChecksumError

    packed = bytearray(gzip.compress(PAYLOAD, compresslevel=0))  # stored blocks
    packed[packed.index(b"xxxx") + 2] = ord("y")  # decodes: only the CRC sees it
    changed = tmp_path / "changed.gz"
    changed.write_bytes(bytes(packed))
    with open_dump(changed) as stream:
        with pytest.raises(ChecksumError, match=r"changed\.gz: gzip data decodes but fails its CRC-32"):
            read_all(stream)
    torn = tmp_path / "torn.gz"
    torn.write_bytes(bytes(packed[: len(packed) // 2]))
    with open_dump(torn) as stream:
        with pytest.raises(DumpError, match=r"torn\.gz: gzip data is corrupt or truncated") as caught:
            read_all(stream)
    assert not isinstance(caught.value, ChecksumError)


@pytest.mark.parametrize("cut", [3, 4, 10])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_bzip2_file_cut_within_its_first_block_is_torn_not_empty(tmp_path, cut, threads):
    path = tmp_path / "torn.bz2"  # indexed_bzip2's threads read "BZh9" alone as an empty file
    path.write_bytes(bz2.compress(PAYLOAD)[:cut])
    with open_dump(path, threads=threads) as stream:
        with pytest.raises(DumpError, match=r"torn\.bz2: bzip2 data is corrupt or truncated near compressed byte"):
            read_all(stream)


def test_an_empty_bzip2_stream_is_empty(tmp_path):
    path = tmp_path / "empty.bz2"
    path.write_bytes(bz2.compress(b""))
    with open_dump(path, threads=2) as stream:
        assert read_all(stream) == b""
