#!/usr/bin/env python3
"""The house's size limits (issue 31): no source file over 600 lines, no function over 80.

    python3 tools/house.py [--allow PATH]... [--max-file N] [--max-fn N] [ROOT...]

Measures every .rs file below each ROOT (default: sim/src, from the repository's root), prints
a table of the files and functions over the limits, and exits 1 if any is not allowed. An
`--allow PATH` (relative to its ROOT, e.g. `explore.rs`) still prints that file's rows but
marked allowed, so CI can call this before every file is within the limits.

Counting (after tools/measure.py, so the two agree): strings, chars and comments are blanked
first; test code is left out (files under tests/, benches/, examples/, and `#[cfg(test)] mod x
{..}` blocks, whose lines do not count toward their file's length either). A function is a line
matching `[pub[(..)]] [const|async|unsafe|extern ".."]* fn NAME` with a body; its length is the
lines from the `fn` line to its closing `}`. A nested fn counts on its own and inside its parent.
"""
import argparse, bisect, os, re, sys


def clean(s):
    """`s` with strings, chars and (nested) comments blanked, newlines kept."""
    o = []; i = 0; n = len(s); st = None; d = 0; h = 0
    while i < n:
        c = s[i]
        if st is None:
            if s.startswith('//', i):
                j = s.find('\n', i); j = n if j < 0 else j
                o.append(' ' * (j - i)); i = j; continue
            if s.startswith('/*', i):
                st = 'b'; d = 1; o.append('  '); i += 2; continue
            m = re.match(r'b?r(#*)"', s[i:i + 40])
            if m and (i == 0 or not (s[i - 1].isalnum() or s[i - 1] == '_')):
                h = len(m.group(1)); st = 'r'; o.append(' ' * m.end()); i += m.end(); continue
            if c == '"':
                st = 's'; o.append(' '); i += 1; continue
            if c == "'":
                m = re.match(r"'(\\(x..|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", s[i:i + 12])
                if m:
                    o.append(' ' * m.end()); i += m.end(); continue
            o.append(c); i += 1; continue
        if st == 'b':
            if s.startswith('/*', i):
                d += 1; o.append('  '); i += 2; continue
            if s.startswith('*/', i):
                d -= 1; o.append('  '); i += 2; st = None if d == 0 else st; continue
        elif st == 's':
            if c == '\\':
                o.append('\n' if s[i + 1:i + 2] == '\n' else ' '); i += 2; continue
            if c == '"':
                st = None; o.append(' '); i += 1; continue
        elif st == 'r' and c == '"' and s[i + 1:i + 1 + h] == '#' * h:
            o.append(' ' * (1 + h)); i += 1 + h; st = None; continue
        o.append('\n' if c == '\n' else ' '); i += 1
    return ''.join(o)


FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|default)\s+|extern\s+)*fn\s+(\w+)')


def analyse(path, test_file):
    """(non-test lines, [(fn length, line, name)]) of one file."""
    raw = open(path, encoding='utf-8', errors='replace').read()
    c = clean(raw)
    L = c.split('\n'); R = raw.split('\n'); st = [0]
    for l in L[:-1]:
        st.append(st[-1] + len(l) + 1)
    line = lambda off: bisect.bisect_right(st, off) - 1

    def close(k):
        d = 0
        for k in range(k, len(c)):
            if c[k] == '{': d += 1
            elif c[k] == '}':
                d -= 1
                if d == 0: return k
        return len(c) - 1

    tests = []
    for i, l in enumerate(R):
        if re.match(r'\s*#\[cfg\(test\)\]', l):
            for j in range(i + 1, min(i + 4, len(L))):
                if re.match(r'\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{', L[j]):
                    tests.append((i, line(close(st[j] + L[j].index('{'))))); break
    is_test = lambda i: test_file or any(a <= i <= b for a, b in tests)
    fns = []
    for i, l in enumerate(L):
        m = FN.match(l)
        if not m or is_test(i): continue
        k = st[i] + m.end(); p = 0
        while k < len(c):
            if c[k] in '([': p += 1
            elif c[k] in ')]': p -= 1
            elif p == 0 and c[k] == ';': k = -1; break
            elif p == 0 and c[k] == '{': break
            k += 1
        if 0 <= k < len(c):
            fns.append((line(close(k)) - i + 1, i + 1, m.group(5)))
    lines = len(R) - (1 if raw.endswith('\n') else 0)
    lines -= sum(b - a + 1 for a, b in tests)
    return lines, fns


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('roots', nargs='*', default=['sim/src'])
    ap.add_argument('--allow', action='append', default=[], metavar='PATH',
                    help='a file (relative to its root) reported but not failed; repeatable')
    ap.add_argument('--max-file', type=int, default=600)
    ap.add_argument('--max-fn', type=int, default=80)
    a = ap.parse_args()
    allowed = {os.path.normpath(p) for p in a.allow}
    rows = []
    for root in a.roots:
        for dp, dn, fs in os.walk(root):
            dn[:] = sorted(d for d in dn if d not in ('target', '.git'))
            for f in sorted(fs):
                if not f.endswith('.rs'): continue
                p = os.path.join(dp, f); rel = os.path.relpath(p, root)
                test = any(x in ('tests', 'benches', 'examples') for x in rel.split(os.sep)[:-1])
                if test: continue
                lines, fns = analyse(p, False)
                ok = rel in allowed or os.path.normpath(p) in allowed
                if lines > a.max_file:
                    rows.append(('file', lines, p, '', ok))
                for n, ln, name in fns:
                    if n > a.max_fn:
                        rows.append(('fn', n, f'{p}:{ln}', name, ok))
    rows.sort(key=lambda r: (r[0] != 'file', -r[1], r[2]))
    failing = [r for r in rows if not r[4]]
    if rows:
        print(f"{'kind':<5} {'lines':>5}  {'where':<60} {'name':<24} status")
        for kind, n, where, name, ok in rows:
            print(f"{kind:<5} {n:>5}  {where:<60} {name:<24} {'allowed' if ok else 'OVER'}")
    print(f"{len(failing)} over the limits (files > {a.max_file} lines, functions > "
          f"{a.max_fn} lines), {len(rows) - len(failing)} allowed")
    return 1 if failing else 0


if __name__ == '__main__':
    sys.exit(main())
