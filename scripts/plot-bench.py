#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn the text output of `make bench` into an SVG bar chart.

Usage: plot-bench.py [-o docs/performance.svg] [--title T]
                     [--include RE] [--exclude RE] [bench.txt | -]
       plot-bench.py --self-test

Standard library only.  The parser does not know the bench programs; it
recognises, line by line:
  * a number followed by a throughput unit (GB/s, MB/s, KB/s, GiB/s,
    MiB/s, KiB/s): "sha256  avx512  4096  256   4.62 GB/s  2.40x  default";
  * a ratio: a number followed by "x" ("2.40x", "speedup 10.5x"), a bare
    number followed by "(target ...)", or a bare number ending a line whose
    text contains " / " ("format crc32c / cp   1.10");
  * tables whose header names a throughput column ("... wall cpu GB/s
    maxrss"): each following row, up to a blank line, gives the number
    under that header;
  * section titles: "# comment" lines and "name: text" lines without a
    measurement ("bench-fec: 2G of random data in ...").
An indented line continues the last unindented line without a measurement
(its first field, e.g. "roots 2", prefixes the label), and an indented
ratio-only line gives its ratio to the measurement on the line above.

Bars show throughput, one scale per section (GB/s = 10^9 bytes/s, other
units converted), or per run of rows sharing their first word when those
runs differ by more than 4x (sha256 vs crc32c); a section's ratio-only rows
get ratio bars with a 1.0x line.
The ratio printed next to a bar is the one the bench printed.
"""

import argparse
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

UNITS = {
    'GB/s': 1.0, 'MB/s': 1e-3, 'KB/s': 1e-6,
    'GiB/s': 1.073741824, 'MiB/s': 1.048576e-3, 'KiB/s': 1.024e-6,
}
NUM = r'(\d+(?:\.\d+)?)'
UNIT_RE = '|'.join(re.escape(u) for u in UNITS)
THRU_RE = re.compile(r'(?<![\w.])' + NUM + r'\s*(' + UNIT_RE + r')(?![\w/])')
# "2.40x", not "shani-2x", "0x1f" or "x86"
RATIO_RE = re.compile(r'(?<![\w.\-])' + NUM + r'x(?!\w)')
TARGET_RE = re.compile(r'(?<![\w.\-])' + NUM + r'\s+\(target\b')
SLASH_RATIO_RE = re.compile(r'\s/\s.*\s' + NUM + r'\s*$')
HEADER_RE = re.compile(r'(?:^|\s)(' + UNIT_RE + r')(?=\s|$)')
VALUE_TOKEN_RE = re.compile(r'^\d+(?:\.\d+)?[A-Za-z%/]{0,5}$')
DURATION_RE = re.compile(r'(?<![\w.])\d+(?:\.\d+)?\s?(?:s|ms|us)(?!\w)')
TITLE_RE = re.compile(r'^[\w.-]+: \S')
MAKE_RE = re.compile(r'^make(\[\d+\])?: ')
BENCH_TITLE_RE = re.compile(r'\bbenchmark\b', re.I)


class Record:
    def __init__(self, section, label):
        self.section = section
        self.label = label
        self.gbps = None	# throughput in 10^9 bytes/s
        self.value_text = ''	# as printed, e.g. "4.62 GB/s"
        self.ratio = None
        self.ratio_text = ''
        self.note = ''

    def __repr__(self):
        return 'Record(%r, %r, %r, %r, %r)' % (self.section, self.label,
                                                self.gbps, self.ratio,
                                                self.note)


def clean_label(text):
    text = DURATION_RE.sub('', text)
    text = text.replace('->', ' ')
    text = ' '.join(text.split())
    return text.strip(' ([{;:,=-').strip()


def clean_note(text):
    text = ' '.join(text.split()).strip(' ;:,')
    if text == '-' or text.startswith('- '):
        text = text[1:].strip()	# "-": no ratio
    if not text or len(text) > 32 or text.count('(') != text.count(')'):
        return ''
    if text.startswith(')') or DURATION_RE.search(text):
        return ''
    return text


def short_title(text):
    # paths and scratch directories say nothing about the result
    text = re.sub(r'\s+in\s+/[^\s,;]*', '', text)
    text = re.sub(r'(?<!\S)/[^\s,;]*', '', text)
    return ' '.join(text.split())


def find_ratio(line):
    """(value, start, end, text): end is where a trailing note may start."""
    m = RATIO_RE.search(line)
    if m:
        return float(m.group(1)), m.start(), m.end(), m.group(1) + 'x'
    m = TARGET_RE.search(line)
    if m:
        return float(m.group(1)), m.start(), m.end(1), m.group(1) + 'x'
    m = SLASH_RATIO_RE.search(line)
    if m:
        return float(m.group(1)), m.start(1), m.end(), m.group(1) + 'x'
    return None


def is_command(text):
    """A command line make echoed: VAR=value... then sh/bash or a path."""
    words = text.split()
    while words and re.match(r'^[A-Za-z_]\w*=', words[0]):
        words.pop(0)
    return bool(words) and (words[0] in ('sh', 'bash', 'env') or
                            '/' in words[0])


class Parser:
    def __init__(self):
        self.records = []
        self.sections = []
        self.section = None
        self.fresh_section = True	# no record since the title
        self.hash_title = False		# that title came from a "#" line
        self.context = None
        self.table = None		# (start, end, factor, unit, spans)
        self.md_header = None		# markdown table column names
        self.md_pending = None
        self.last_line = -2
        self.lineno = 0

    def new_section(self, title, from_hash=False):
        if not title:
            return
        if self.fresh_section and self.section is not None:
            if from_hash and self.hash_title:
                return		# a column header under a "#" title
            self.sections.pop()
        self.section = title
        self.sections.append(title)
        self.fresh_section = True
        self.hash_title = from_hash

    def add(self, rec):
        if self.section is None:
            self.new_section('results')
            rec.section = self.section
        self.records.append(rec)
        self.fresh_section = False
        self.last_line = self.lineno

    def table_row(self, line):
        start, end, factor, unit, hspans = self.table
        tokens = [(m.start(), m.end(), m.group())
                  for m in re.finditer(r'\S+', line)]
        value = None
        for s, e, tok in tokens:
            if s < end and e > start and re.match(NUM + r'$', tok):
                value = float(tok)
                text = tok
        if value is None:
            return None
        # values sit under a column header; the label is what is left
        while tokens and VALUE_TOKEN_RE.match(tokens[-1][2]) and any(
                s < tokens[-1][1] and e > tokens[-1][0] for s, e in hspans):
            tokens.pop()
        label = clean_label(' '.join(t[2] for t in tokens))
        rec = Record(self.section, label or 'row %d' % self.lineno)
        rec.gbps = value * factor
        rec.value_text = '%s %s' % (text, unit)
        return rec

    def markdown_row(self, text):
        """| label | cells... |: measured cells, the rest as a note."""
        cells = [c.strip() for c in text.strip().strip('|').split('|')]
        if all(re.match(r'^:?-{3,}:?$', c) for c in cells if c):
            self.md_header = self.md_pending
            return
        thr = rat = None
        for i, c in enumerate(cells[1:], 1):
            m = THRU_RE.search(c)
            if m and thr is None:
                thr = (i, m)
                continue
            r = find_ratio(c)
            if r and rat is None:
                rat = (i, r)
        if thr is None and rat is None:
            self.md_pending = cells
            return
        rec = Record(self.section, clean_label(cells[0]) or
                     'row %d' % self.lineno)
        if thr:
            m = thr[1]
            rec.gbps = float(m.group(1)) * UNITS[m.group(2)]
            rec.value_text = '%s %s' % (m.group(1), m.group(2))
        if rat:
            rec.ratio, rec.ratio_text = rat[1][0], rat[1][3]
        used = {0, thr[0] if thr else -1, rat[0] if rat else -1}
        names = self.md_header or []
        parts = []
        for i, c in enumerate(cells):
            if i in used or not c:
                continue
            name = names[i] if i < len(names) else ''
            parts.append((name + ' ' + c).strip())
        note = ', '.join(parts)
        rec.note = note if len(note) <= 40 else ''
        self.add(rec)

    def feed(self, raw):
        self.lineno += 1
        line = raw.rstrip('\r\n').expandtabs()
        text = line.strip()
        if not text:
            self.table = None
            self.context = None
            self.md_header = self.md_pending = None
            return
        if text.startswith('#'):
            self.new_section(text.lstrip('#').strip(), from_hash=True)
            return
        if MAKE_RE.match(text) or is_command(text):
            return
        if text.startswith('|'):
            self.markdown_row(text)
            return
        indented = line[0].isspace()
        thr = THRU_RE.search(line)
        hdr = HEADER_RE.search(line)
        if hdr and not thr:
            unit = hdr.group(1)
            spans = [(m.start(), m.end()) for m in re.finditer(r'\S+', line)]
            self.table = (hdr.start(1), hdr.end(1), UNITS[unit], unit, spans)
            return
        if self.table and not thr:
            rec = self.table_row(line)
            if rec:
                self.add(rec)
                return
        rat = find_ratio(line)
        if not thr and not rat:
            if not indented:
                if TITLE_RE.match(text) or BENCH_TITLE_RE.search(text):
                    self.new_section(short_title(text))
                    self.context = None
                else:
                    self.context = re.split(r'\s{2,}', text)[0]
            return
        if not indented:
            self.context = None

        # a ratio-only continuation line completes the record above
        if (not thr and indented and self.records and
                self.last_line == self.lineno - 1 and
                self.records[-1].ratio is None and
                self.records[-1].gbps is not None):
            rec = self.records[-1]
            rec.ratio, rec.ratio_text = rat[0], rat[3]
            if not rec.note:
                rec.note = clean_note(line[rat[2]:])
            self.last_line = self.lineno
            return

        spans = []
        if thr:
            spans.append((thr.start(), thr.end()))
        if rat:
            spans.append((rat[1], rat[2]))
        label = clean_label(line[:min(a for a, _ in spans)])
        if indented and self.context:
            label = (self.context + ' ' + label).strip()
        rec = Record(self.section, label or 'line %d' % self.lineno)
        if thr:
            rec.gbps = float(thr.group(1)) * UNITS[thr.group(2)]
            rec.value_text = '%s %s' % (thr.group(1), thr.group(2))
        if rat:
            rec.ratio, rec.ratio_text = rat[0], rat[3]
        rec.note = clean_note(line[max(b for _, b in spans):])
        self.add(rec)


def parse(lines):
    p = Parser()
    for line in lines:
        p.feed(line)
    sections = [s for s in p.sections
                if any(r.section == s for r in p.records)]
    return sections, p.records


# ---- SVG ----

FONT = 'DejaVu Sans Mono, Menlo, Consolas, monospace'
CHAR_W = 6.7		# advance of an 11px monospace glyph
ROW_H = 17
BAR_H = 11
BAR_W = 380
PAD = 14
COL_HIGH = '#2f6fa7'	# ratio >= 1
COL_LOW = '#b0b0b0'	# ratio < 1
COL_NONE = '#6f9fcf'	# no ratio printed


def fmt_gbps(v):
    if v >= 10:
        return '%.0f' % v
    if v >= 1:
        return '%.1f' % v
    return '%.2g' % v


def bar_colour(rec):
    if rec.ratio is None:
        return COL_NONE
    return COL_HIGH if rec.ratio >= 1.0 else COL_LOW


def split_runs(rows):
    """
    One scale per section, unless the section is a table whose runs of
    rows sharing the first label word differ by more than 4x in speed
    (e.g. sha256 at 4 GB/s next to crc32c at 35 GB/s): then one scale
    per run, titled by that word.
    """
    runs = []
    for r in rows:
        word = r.label.split()[0] if r.label.split() else ''
        if runs and runs[-1][0] == word:
            runs[-1][1].append(r)
        else:
            runs.append((word, [r]))
    if len(runs) < 2 or any(len(g) < 2 for _, g in runs):
        return [(None, rows)] if rows else []
    tops = [max(r.gbps for r in g) for _, g in runs]
    if max(tops) <= 4 * min(tops):
        return [(None, rows)]
    return runs


def render(sections, records, title, source):
    label_chars = max([len(r.label) for r in records] + [20])
    label_w = min(label_chars, 56) * CHAR_W + 10
    x_bar = PAD + label_w
    tail = max(len(r.value_text) + len(r.ratio_text) + len(r.note) + 3
               for r in records)
    text_w = max(tail, 30) * CHAR_W
    width = int(x_bar + BAR_W + text_w + PAD)
    out = []
    y = PAD + 14

    def text(x, yy, s, size=11, weight='normal', fill='#222',
             anchor='start'):
        out.append('<text x="%.1f" y="%.1f" font-size="%d" '
                   'font-weight="%s" fill="%s" text-anchor="%s">%s</text>'
                   % (x, yy, size, weight, fill, anchor, escape(s)))

    text(PAD, y, title, size=15, weight='bold')
    y += 18
    sub = ('bars: throughput, one scale per block, maximum shown above it '
           '(GB/s = 10^9 bytes/s); value and ratio as printed')
    if source:
        sub += '; from ' + source
    text(PAD, y, sub, size=10, fill='#555')
    y += 16
    lx = PAD
    for colour, what in ((COL_HIGH, 'ratio >= 1'), (COL_LOW, 'ratio < 1'),
                         (COL_NONE, 'no ratio')):
        out.append('<rect x="%.1f" y="%.1f" width="10" height="10" '
                   'fill="%s"/>' % (lx, y - 9, colour))
        text(lx + 14, y, what, size=10, fill='#555')
        lx += 14 + (len(what) + 3) * 6.2
    y += 10

    blocks = []	# (section title or None, subtitle or None, rows, thru)
    for sec in sections:
        rows = [r for r in records if r.section == sec]
        thru = [r for r in rows if r.gbps is not None]
        ratios = [r for r in rows if r.gbps is None]
        head = sec
        for sub, grp in split_runs(thru):
            blocks.append((head, sub, grp, True))
            head = None
        if ratios:
            blocks.append((head, 'ratios' if thru else None, ratios, False))
    for title_text, sub, rows, by_thru in blocks:
        if title_text:
            y += 20
            text(PAD, y, title_text, size=12, weight='bold')
            y += 8
        if sub:
            y += 15
            text(PAD + 8, y, sub, size=11, weight='bold', fill='#555')
            y += 2
        if by_thru:
            top = max(r.gbps for r in rows)
        else:
            top = max([r.ratio for r in rows] + [1.0])
        top = top or 1.0
        # axis, with the scale maximum (or a 1.0x line for ratios)
        y0 = y + 4
        y1 = y + 4 + len(rows) * ROW_H
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                   'stroke="#999" stroke-width="1"/>'
                   % (x_bar, y0, x_bar, y1))
        if by_thru:
            text(x_bar + BAR_W, y0 - 2, fmt_gbps(top) + ' GB/s', size=9,
                 fill='#777', anchor='end')
        else:
            x1 = x_bar + BAR_W / top
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                       'stroke="#c44" stroke-width="1" '
                       'stroke-dasharray="3,2"/>' % (x1, y0, x1, y1))
            text(x1, y0 - 2, '1.0x', size=9, fill='#c44', anchor='middle')
        for r in rows:
            y += ROW_H
            lab = r.label if len(r.label) <= 56 else r.label[:55] + '~'
            text(x_bar - 6, y, lab, anchor='end')
            v = r.gbps if by_thru else r.ratio
            w = BAR_W * v / top
            tip = ' '.join(s for s in (r.label, r.value_text, r.ratio_text,
                                       r.note) if s)
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" '
                       'fill="%s"><title>%s</title></rect>'
                       % (x_bar, y - BAR_H + 1, max(w, 1.0), BAR_H,
                          bar_colour(r), escape(tip)))
            tx = x_bar + w + 5
            if r.value_text:
                text(tx, y, r.value_text)
                tx += (len(r.value_text) + 1) * CHAR_W
            if r.ratio_text:
                text(tx, y, r.ratio_text, weight='bold',
                     fill='#1d4f7a' if r.ratio >= 1 else '#666')
                tx += (len(r.ratio_text) + 1) * CHAR_W
            if r.note:
                text(tx, y, r.note, size=10, fill='#777')
    height = int(y + PAD + 6)
    head = ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d" font-family="%s">\n'
            '<rect width="100%%" height="100%%" fill="#fff"/>\n'
            % (width, height, width, height, escape(FONT)))
    return head + '\n'.join(out) + '\n</svg>\n'


def write_atomic(path, data):
    d = os.path.dirname(path) or '.'
    fd, tmp = tempfile.mkstemp(prefix='.plot-bench.', dir=d)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# ---- self-test: hand-written sample in the formats the bench scripts
# print; expected values are read off the sample, not computed ----

SAMPLE = """\
build/bench/bench_hash
# single core, thread CPU time, median of 5 runs; ratio vs OpenSSL EVP one message at a time
# algorithm   engine      msg batch   throughput   ratio
sha256        avx512     4096  256    4.62 GB/s   2.40x  default
sha256        shani-2x   4096  256    2.38 GB/s   1.25x  forced
sha256        portable   4096  256    0.32 GB/s   0.17x  forced

# hmac(sha256) vs plain sha256, same engine, 4104-byte messages (ratio = hmac / plain)
hmac(sha256)  avx512     4104  256    4.55 GB/s   0.98x  forced, vs plain
make[1]: Leaving directory '/work/main'
BENCH_FEC=/work/main/build/bench/bench_fec sh bench/bench_fec.sh
bench-fec: 2G of random data in /var/tmp/dmt-bench-fec.Ab12
roots 2   veritysetup: format 2.611s, with FEC 14.020s -> FEC 11.409s
          ours: encode 0.812s (2522 MiB/s; 1 thread 1.544s), check 0.640s
          parity identical; speedup 14.1x (target 10x)
bench-integrity: 2G of random data in /var/tmp/dmt-bench-integrity.x1, 5 runs each

median of 5                            wall      cpu   GB/s    maxrss
veritysetup format (sha256 4K)       2.651s   2.610s   0.81       7M
format -I sha256 -s 4096             0.402s   0.771s   5.34      21M

  veritysetup / format sha256 (speedup)         6.59 (target >= 4) ok
  format crc32c / (cp + fsync)                  0.90
sh bench/bench_verity.sh build build/bench/verity
verity-tool benchmark, 2026-01-01 10:00 UTC, 2 CPUs
veritysetup 2.6.1; verity-tool 0.1.0; engine: avx512
load before: 0.10 0.20 0.30
load after: 1.90 1.20 0.60

2 GiB, sha256 unless noted, 5 runs, median wall time, CPU = user+sys

| command | wall | throughput | CPU |
|---|---|---|---|
| veritysetup format                 |  2.701 s |   0.80 GB/s |  2.650 s |
| verity-tool build (all cores)      |  0.470 s |   4.57 GB/s |  0.910 s |

| ratio | wall | CPU | target | |
|---|---|---|---|---|
| build, all cores vs veritysetup format       |  5.75x |  2.91x | >= 5x | met |
"""

EXPECT = [
    # section prefix, label, GB/s, ratio, note
    ('single core', 'sha256 avx512 4096 256', 4.62, 2.40, 'default'),
    ('single core', 'sha256 shani-2x 4096 256', 2.38, 1.25, 'forced'),
    ('single core', 'sha256 portable 4096 256', 0.32, 0.17, 'forced'),
    ('hmac(sha256)', 'hmac(sha256) avx512 4104 256', 4.55, 0.98,
     'forced, vs plain'),
    ('bench-fec: 2G of random data', 'roots 2 ours: encode',
     2522 * 1.048576e-3, 14.1, '(target 10x)'),
    ('bench-integrity', 'veritysetup format (sha256 4K)', 0.81, None, ''),
    ('bench-integrity', 'format -I sha256 -s 4096', 5.34, None, ''),
    ('bench-integrity', 'veritysetup / format sha256 (speedup)', None,
     6.59, '(target >= 4) ok'),
    ('bench-integrity', 'format crc32c / (cp + fsync)', None, 0.90, ''),
    ('verity-tool benchmark', 'veritysetup format', 0.80, None,
     'wall 2.701 s, CPU 2.650 s'),
    ('verity-tool benchmark', 'verity-tool build (all cores)', 4.57, None,
     'wall 0.470 s, CPU 0.910 s'),
    ('verity-tool benchmark', 'build, all cores vs veritysetup format',
     None, 5.75, 'CPU 2.91x, target >= 5x, met'),
]


def self_test():
    sections, recs = parse(SAMPLE.splitlines(True))
    fails = []
    if len(recs) != len(EXPECT):
        fails.append('%d records, expected %d: %r'
                     % (len(recs), len(EXPECT), recs))
    for r, (sec, label, gbps, ratio, note) in zip(recs, EXPECT):
        ok = (r.section.startswith(sec) and r.label == label and
              (gbps is None) == (r.gbps is None) and
              (gbps is None or abs(r.gbps - gbps) < 1e-9) and
              (ratio is None) == (r.ratio is None) and
              (ratio is None or abs(r.ratio - ratio) < 1e-9) and
              r.note == note)
        if not ok:
            fails.append('got %r, expected %r'
                         % (r, (sec, label, gbps, ratio, note)))
    if any('/var/tmp' in s for s in sections):
        fails.append('scratch path left in a title: %r' % sections)
    svg = render(sections, recs, 'self-test', None)
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as e:
        fails.append('SVG is not well-formed XML: %s' % e)
        root = None
    if root is not None:
        ns = '{http://www.w3.org/2000/svg}'
        bars = [e for e in root.iter(ns + 'rect') if e.find(ns + 'title')
                is not None]
        if len(bars) != len(EXPECT):
            fails.append('%d bars, expected %d' % (len(bars), len(EXPECT)))
        texts = [e.text for e in root.iter(ns + 'text')]
        for want in ('2.40x', '4.62 GB/s', '2522 MiB/s', '14.1x', '6.59x',
                     '4.57 GB/s', '5.75x'):
            if want not in texts:
                fails.append('label %r missing from the SVG' % want)
    for f in fails:
        print('plot-bench self-test: FAIL: ' + f, file=sys.stderr)
    if not fails:
        print('plot-bench self-test: %d records, %d sections: ok'
              % (len(recs), len(sections)))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(
        description='SVG bar chart from the output of `make bench`.')
    ap.add_argument('input', nargs='?', default='-',
                    help='bench output (default: stdin)')
    ap.add_argument('-o', '--output', default='docs/performance.svg')
    ap.add_argument('--title', default='make bench')
    ap.add_argument('--include', help='keep only rows whose section or '
                    'label matches this regular expression')
    ap.add_argument('--exclude', help='drop rows whose section or label '
                    'matches this regular expression')
    ap.add_argument('--self-test', action='store_true',
                    help='parse and render a built-in sample, then exit')
    args = ap.parse_args()
    if args.self_test:
        return self_test()

    if args.input == '-':
        sections, recs = parse(sys.stdin)
        source = None
    else:
        try:
            with open(args.input, encoding='utf-8', errors='replace') as f:
                sections, recs = parse(f)
        except OSError as e:
            print('plot-bench: %s: %s' % (args.input, e.strerror),
                  file=sys.stderr)
            return 4
        source = os.path.basename(args.input)
    for opt, keep in ((args.include, True), (args.exclude, False)):
        if opt:
            rx = re.compile(opt)
            recs = [r for r in recs
                    if bool(rx.search(r.section) or rx.search(r.label))
                    == keep]
    if not recs:
        print('plot-bench: %s: no throughput or ratio found'
              % (args.input if args.input != '-' else 'stdin'),
              file=sys.stderr)
        return 2
    svg = render(sections, recs, args.title, source)
    try:
        write_atomic(args.output, svg)
    except OSError as e:
        print('plot-bench: %s: %s' % (args.output, e.strerror),
              file=sys.stderr)
        return 4
    print('plot-bench: %d rows in %d sections -> %s'
          % (len(recs), len({r.section for r in recs}), args.output),
          file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
