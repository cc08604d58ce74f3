#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Checks a screenshot is not blank: decodes the PNG (stdlib only) and counts coloured pixels.
"""usage: png_check.py SHOT.png MIN_COLOURED_FRACTION COLOUR...

Exit 0 when at least MIN_COLOURED_FRACTION of the pixels are neither white nor grey-ish background and every
COLOUR (#rrggbb, e.g. a phase's fill) appears on at least 50 pixels (within a small tolerance, for
anti-aliasing); else 1 with what was found.
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, ctype, _, _, interlace = header
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main(argv):
    path, min_frac, colours = argv[1], float(argv[2]), argv[3:]
    width, height, bpp, rows = decode(path)
    want = {c: tuple(int(c[k:k + 2], 16) for k in (1, 3, 5)) for c in colours}
    hits = dict.fromkeys(colours, 0)
    coloured = 0
    for row in rows:
        for x in range(0, width * bpp, bpp):
            r, g, b = row[x], row[x + 1], row[x + 2]
            if max(r, g, b) - min(r, g, b) > 40:  # Saturated: not white, grey or black text.
                coloured += 1
                for name, (wr, wg, wb) in want.items():
                    if abs(r - wr) + abs(g - wg) + abs(b - wb) <= 24:
                        hits[name] += 1
    frac = coloured / float(width * height)
    missing = [c for c, n in hits.items() if n < 50]
    print(f"{path}: {width}x{height}, {frac:.1%} coloured pixels; per colour: {hits}")
    if frac < min_frac or missing:
        print(f"blank or incomplete screenshot: need >= {min_frac:.1%} coloured, missing colours {missing}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
