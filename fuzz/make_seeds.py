#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the CSV, .npy and argv seeds of fuzz/corpus/ and the near-valid
model files made from fuzz/make_seeds.sh's (run that first). Valid and
near-valid inputs, each small: python3 fuzz/make_seeds.py (from the
repository)."""
import io
import os
import struct
import zlib

import numpy as np

C = "fuzz/corpus"


def put(target, name, data):
    os.makedirs(f"{C}/{target}", exist_ok=True)
    with open(f"{C}/{target}/{name}", "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


# CSV: headers, quotes, NaN, comments, delimiters, blank lines, ragged rows
csv = {
    "header.csv": "a,b,y\n1,2,3\n4,5,6\n",
    "noheader.csv": "1,2,3\n4,5,6\n7,8,9\n",
    "quoted.csv": '"a","b ""q""",y\n"1",2,"3.5e-1"\n4,"5",6\n',
    "nan.csv": "a,b,y\n1,NaN,3\n4,5,inf\n",
    "comment.csv": "# comment\na,b,y\n# more\n1,2,3\n\n4,5,6\n",
    "semicolon.csv": "a;b;y\n1;2;3\n4;5;6\n",
    "tab.csv": "1\t2\t3\n4\t5\t6\n",
    "ragged.csv": "a,b,y\n1,2,3\n4,5\n",
    "badcell.csv": "a,b,y\n1,x,3\n",
    "crlf.csv": "a,b,y\r\n1,2,3\r\n4,5,6\r\n",
    "empty_fields.csv": "a,,y\n1,,3\n",
    "one_col.csv": "y\n1\n2\n",
    "spaces.csv": "a , b , y\n 1 , 2 , 3 \n",
    "hex_exp.csv": "a,b,y\n0x1p3,1e308,-1e-320\n1e309,2,3\n",
    "bom.csv": "\ufeffa,b,y\n1,2,3\n",
    "unterminated_quote.csv": 'a,b,y\n"1,2,3\n',
    "percent.csv": "%c\n1\t2\n3\t4\n",
}
for name, text in csv.items():
    put("csv", name, text)


def npy(arr, version=None, fortran=False):
    b = io.BytesIO()
    a = np.asfortranarray(arr) if fortran else np.ascontiguousarray(arr)
    np.lib.format.write_array(b, a, version=version)
    return b.getvalue()


x = np.arange(6, dtype=np.float64).reshape(3, 2) / 4
for v in [(1, 0), (2, 0), (3, 0)]:
    for dt in ["f8", "f4"]:
        put("npy", f"v{v[0]}_{dt}_c.npy", npy(x.astype(dt), v))
        put("npy", f"v{v[0]}_{dt}_fortran.npy", npy(x.astype(dt), v, fortran=True))
put("npy", "f8_1d.npy", npy(np.arange(4.0)))
put("npy", "f8_3d.npy", npy(np.zeros((2, 2, 2))))
put("npy", "f8_big_endian.npy", npy(x.astype(">f8")))
put("npy", "i4.npy", npy(np.arange(4, dtype=np.int32)))
put("npy", "f8_empty.npy", npy(np.zeros((0, 2))))
put("npy", "f8_nan.npy", npy(np.array([[1.0, np.nan], [np.inf, 2.0]])))
put("npy", "f8_truncated.npy", npy(x)[:-5])
good = npy(x)
put("npy", "f8_bad_header.npy", good.replace(b"'shape': (3, 2)", b"'shape': (3, -2)"))
put("npy", "v4.npy", good[:6] + b"\x04" + good[7:])

# argv lines: a command, then its arguments, one per line
argv = {
    "fit_basic.txt": ["fit", "train.csv", "--target", "y", "-o", "m.rfx"],
    "fit_many.txt": ["fit", "d.csv", "--method", "bayes", "-D", "64", "--seed=7", "--kernel",
                     "matern", "--nu", "2.5", "--form", "cos-sin", "--threads", "2",
                     "--delimiter", "tab", "--no-header", "--length-scale", "0.5", "-omodel"],
    "fit_gamma.txt": ["fit", "d.csv", "--gamma", "0.1", "--kernel", "laplacian", "--structure",
                      "sorf", "--lambda", "0", "--", "-x"],
    "fit_pce.txt": ["fit", "d.csv", "--method", "pce", "--degree", "3", "--q-norm", "0.5",
                    "--uniform", "-1,1", "--pce-method", "lars"],
    "predict.txt": ["predict", "m.rfx", "-", "--std", "-o", "out.npy", "--delimiter", ";"],
    "eval.txt": ["eval", "m.rfx", "t.csv", "--target", "-1"],
    "info.txt": ["info", "m.rfx", "--help"],
    "kernel_approx.txt": ["kernel-approx", "d.csv", "--features", "16,32,64", "--points", "100",
                          "--gamma=2", "--seed", "18446744073709551615"],
    "sobol.txt": ["sobol", "m.rfx", "--dim", "3", "--uniform", "0,1", "--bootstrap", "10"],
    "sample.txt": ["sample", "--list"],
    "unknown.txt": ["nosuch", "--target", "--x=1", "-Dq", "--threads", "-1"],
    "bad_values.txt": ["fit", "d.csv", "--seed", "1e3", "--threads", "99999999999", "-D",
                       "0", "--nu", "3", "--delimiter", "ab", "--length-scale", "nan"],
}
for name, args in argv.items():
    put("cli_args", name, "\n".join(args))

# near-valid model files from the valid ones
for target in ["model_file", "model_buffer"]:
    path = f"{C}/{target}/bayes.rfx"
    if not os.path.exists(path):
        continue
    good = open(path, "rb").read()
    put(target, "truncated.rfx", good[:len(good) // 2])
    put(target, "header_only.rfx", good[:32])
    newer = bytearray(good)
    newer[8] = 3  # one past FORMAT_VERSION
    put(target, "newer_version.rfx", bytes(newer))
    flipped = bytearray(good)
    flipped[100] ^= 0x10
    put(target, "bad_crc.rfx", bytes(flipped))
    # a record count too large, with the checksums made right
    big = bytearray(good)
    struct.pack_into("<Q", big, 32 + 8, 1 << 60)
    struct.pack_into("<I", big, 24, zlib.crc32(bytes(big[32:])))
    struct.pack_into("<I", big, 28, zlib.crc32(bytes(big[:28])))
    put(target, "huge_count.rfx", bytes(big))
