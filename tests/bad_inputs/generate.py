#!/usr/bin/python3
"""Regenerate the input files of the bad-input catalogue (cases.tsv).

The files are committed; this script documents how each was made and
rewrites them byte for byte.  Run from anywhere: /usr/bin/python3 generate.py
"""
import io
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = b"\x93NUMPY"


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def npy_bytes(arr, version=(1, 0)):
    b = io.BytesIO()
    np.lib.format.write_array(b, arr, version=version, allow_pickle=True)
    return b.getvalue()


def raw_npy(header, payload=b"", version=(1, 0)):
    """A .npy image with a hand-written header dict (padded as numpy does)."""
    body = header.encode("latin1")
    if version == (1, 0):
        pre = 10
        total = (pre + len(body) + 1 + 63) // 64 * 64
        body = body + b" " * (total - pre - len(body) - 1) + b"\n"
        length = len(body).to_bytes(2, "little")
    else:
        pre = 12
        total = (pre + len(body) + 1 + 63) // 64 * 64
        body = body + b" " * (total - pre - len(body) - 1) + b"\n"
        length = len(body).to_bytes(4, "little")
    return MAGIC + bytes(version) + length + body + payload


def f8(values):
    return np.asarray(values, dtype="<f8").tobytes()


A = np.array([[2.385, -0.5, 1.25], [0.75, 3.5, -2.0]])
good = npy_bytes(A)
hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }"

# --- .npy: framing -------------------------------------------------------
write("npy_empty_file.npy", b"")
write("npy_short_magic.npy", MAGIC[:4])
write("npy_zip_magic.npy", b"PK\x03\x04" + b"\0" * 60)  # an .npz is a zip
write("npy_no_header_length.npy", MAGIC + b"\x01\x00")
write("npy_version_9.npy", MAGIC + b"\x09\x00" + good[8:])
header_len = int.from_bytes(good[8:10], "little")
write("npy_header_past_eof.npy", good[:10] + good[10:10 + header_len // 2])
write("npy_header_len_lies.npy", MAGIC + b"\x01\x00" + (4000).to_bytes(2, "little") + good[10:])
write("npy_truncated_data.npy", good[:-5])
write("npy_extra_bytes.npy", good + b"\0" * 8)
# --- .npy: header dictionary ----------------------------------------------
write("npy_header_trailing_text.npy", raw_npy(hdr % "(2, 3)" + " junk", f8(A)))
write("npy_missing_shape.npy", raw_npy("{'descr': '<f8', 'fortran_order': False}", f8(A)))
write("npy_duplicate_key.npy",
      raw_npy("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (6,)}", f8(A)))
write("npy_unknown_key.npy",
      raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), 'extra': 1}", f8(A)))
write("npy_fortran_not_bool.npy",
      raw_npy("{'descr': '<f8', 'fortran_order': 1, 'shape': (2, 3), }", f8(A)))
write("npy_shape_not_tuple.npy", raw_npy(hdr % "(6)", f8(A)))
write("npy_negative_dim.npy", raw_npy(hdr % "(-2, 3)", f8(A)))
write("npy_dim_overflow.npy", raw_npy(hdr % "(99999999999999999999999, 1)", f8(A)))
write("npy_17_dims.npy", raw_npy(hdr % ("(" + "1, " * 17 + ")"), f8([1.0])))
write("npy_unterminated_string.npy", raw_npy("{'descr: '<f8'}", b""))
# --- .npy: lying or huge shapes ---------------------------------------------
write("npy_shape_overflows.npy", raw_npy(hdr % "(100000000000, 100000000000)", f8(A)))
write("npy_huge_shape.npy", raw_npy(hdr % "(100000, 100000)", f8(A)))
write("npy_shape_too_small.npy", raw_npy(hdr % "(2, 2)", f8(A)))
write("npy_huge_shape_v2.npy", raw_npy(hdr % "(4000000000, 3)", f8(A), version=(2, 0)))
# --- .npy: dtypes -----------------------------------------------------------
write("npy_int64.npy", npy_bytes(np.arange(6, dtype="<i8").reshape(2, 3)))
write("npy_big_endian_int.npy", npy_bytes(np.arange(6, dtype=">i4").reshape(2, 3)))
write("npy_complex.npy", npy_bytes(A.astype("<c16")))
write("npy_object.npy", npy_bytes(np.array([[1.5, None]], dtype=object)))
write("npy_structured.npy", npy_bytes(np.zeros(2, dtype=[("a", "<f8"), ("b", "<i4")])))
write("npy_bool.npy", npy_bytes(np.ones((2, 2), dtype=bool)))
# --- .npy: content ------------------------------------------------------------
write("npy_empty_rows.npy", npy_bytes(np.zeros((0, 3))))
write("npy_nan.npy", npy_bytes(np.array([[1.0, 2.0], [np.nan, 4.0]])))
write("npy_inf_f4_stack.npy",
      npy_bytes(np.array([[[1, 2], [3, 4]], [[5, np.inf], [7, 8]]], dtype="<f4")))
write("npy_big_endian_neg_inf.npy", npy_bytes(np.array([[1.0, -np.inf]], dtype=">f8")))
write("npy_subnormal_nan_payload.npy",
      raw_npy(hdr % "(1, 2)", f8([5e-324]) + b"\x01\x00\x00\x00\x00\x00\xf8\x7f"))

# --- CSV --------------------------------------------------------------------
csv = {
    "csv_empty.csv": "",
    "csv_blank_lines.csv": "\n\n   \n\t\n",
    "csv_comments_only.csv": "# exported by tool X\n# nothing else\n",
    "csv_header_only.csv": "q0,q1,q2\n",
    "csv_ragged.csv": "1,2,3\n4,5\n6,7,8\n",
    "csv_ragged_whitespace.csv": "1 2 3\n4 5 6 7\n",
    "csv_text_field.csv": "1,2\n3,four\n",
    "csv_empty_field.csv": "1,,2\n3,4,5\n",
    "csv_semicolon.csv": "1;2\n3;4\n",
    "csv_decimal_comma.csv": "1,5 2,5\n3,5 4,5\n",
    "csv_typo_first_row.csv": "1.2.3,4\n5,6\n",
    "csv_nan.csv": "1,2\nnan,4\n",
    "csv_inf.csv": "1,-inf\n3,4\n",
    "csv_overflow.csv": "1,1e999\n3,4\n",
    "csv_quoted.csv": '"1","2"\n"3","4"\n',
    # attention matrices for represent / softmax-bottleneck
    "p_not_stochastic.csv": "0.5,0.3\n0.5,0.6\n",
    "p_zero.csv": "1,0.5\n0,0.5\n",
    "p_negative.csv": "1.5,0.5\n-0.5,0.5\n",
    "p_rect.csv": "0.5,0.5,0.5\n0.5,0.5,0.5\n",
}
for name, text in csv.items():
    write(name, text.encode("latin1"))
write("csv_binary.csv", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
write("csv_long_field.csv", b"1," + b"9" * 600 + b"\n3,4\n")
write("regular_file", b"a regular file: nothing can be created below it\n")
os.makedirs(os.path.join(HERE, "dir.npy"), exist_ok=True)
write(os.path.join("dir.npy", ".keep"), b"")
write("good.csv", b"2.385,0.5\n-1.25,3\n")

# .npz archives (zip files of .npy members) and JSON files that are not what
# the command wants.
def write_npz(name, **arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    write(name, buf.getvalue())


write("npz_corrupt.npz", b"PK\x03\x04" + b"\x00" * 40)
write_npz("npz_two.npz", a=A, b=A.T)
write_npz("npz_bad_member.npz", a=np.arange(6, dtype="<i4").reshape(2, 3))
import zipfile
_buf = io.BytesIO()
with zipfile.ZipFile(_buf, "w") as _z:
    _z.writestr("readme.txt", "no arrays here\n")
write("npz_empty.npz", _buf.getvalue())
write("npz_not_index.json", b'{"a": 1}\n')
os.makedirs(os.path.join(HERE, "model_config"), exist_ok=True)
write(os.path.join("model_config", "config.json"),
      b'{"model_type": "bert", "hidden_size": 32, "num_attention_heads": 4}\n')

# Arrays of fewer than 2 dimensions where a matrix is needed (a 0-d scalar,
# a 1-d vector, a 1-d .npz member).
write("npy_0d.npy", npy_bytes(np.array(0.5, dtype="<f8")))
write("npy_1d.npy", npy_bytes(np.array([0.25, 0.75], dtype="<f8")))
write_npz("npz_1d.npz", v=np.array([1.0, 2.0, 3.0]))
