#!/usr/bin/env python3
"""The module graph of a crate, layered, and its cycles (issue 31: "the circles are gone").

    python3 tools/modgraph.py [--depth N] [--why] [ROOT...]

For each ROOT (default: sim/src and src, from the repository's root) prints every module with
the modules it uses, in layers: layer 0 uses none of the others, layer n uses only modules in
layers below n. Modules on a cycle (a strongly connected component of more than one module)
are printed apart, each with the edges that close its circle and the paths behind them (`--why`:
behind every edge); the exit status is 1 if there is
any cycle, else 0.

How it counts. A module is a file (`a/b.rs` or `a/b/mod.rs` is `a::b`, lib.rs is `crate`,
`#[path]` is followed), cut to its first N segments (`--depth`, default 1: `rt::execution` is
`rt`); `crate` itself is left out (it re-exports everything). Strings, chars and comments (so
doc comments) are blanked first, after tools/house.py, and `#[cfg(test)] mod x {..}` blocks are
left out: a test may reach anywhere. Module A uses module B when A's code names an item of B by
a path: in a `use` tree (nesting `use crate::{a::{b, c}, d}` is followed; `crate::`, `super::`,
`self::` and child-module heads are resolved against A's place) or in a path in code
(`crate::b::f()`, `super::T`). A path goes down through modules to its item, and an item that
the module it is named in only re-exports (`pub use`) is followed to where it is defined, so a
facade that re-exports is not a dependency of the modules it re-exports from, and code naming
the item through the facade (or through a name a parent imported, `super::T`) uses the
defining module. A `pub use` counts as a use of its own
module only when the name is also used in that file. Paths to other crates are not counted.
"""
import argparse, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from house import clean  # noqa: E402

ITEM = re.compile(r'\b(?:struct|enum|trait|type|fn|const|static|union|mod)\s+(\w+)'
                  r'|\bmacro_rules!\s*(\w+)')
USE = re.compile(r'(?<![\w:])(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);', re.S)
PATH = re.compile(r'(?<![\w:$])((?:crate|super|self|\w+)(?:\s*::\s*\w+)+)')


def strip_tests(raw, c):
    """`c` (cleaned source) with its `#[cfg(test)] mod x {..}` blocks blanked."""
    out = list(c)
    for m in re.finditer(r'#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?'
                         r'mod\s+\w+\s*\{', c):
        d = 0
        for k in range(m.end() - 1, len(c)):
            if c[k] == '{': d += 1
            elif c[k] == '}':
                d -= 1
                if d == 0: break
        for i in range(m.start(), k + 1):
            if out[i] != '\n': out[i] = ' '
    return ''.join(out)


def _tree(s, prefix=()):
    """[(absolute-or-relative segments, bound name; None for a glob)] of one `use` tree's text,
    spaces gone and `x as y` written `x@y`."""
    parts, d, cur = [], 0, ''
    for ch in s:
        if ch == '{': d += 1
        elif ch == '}': d -= 1
        if ch == ',' and d == 0:
            parts.append(cur); cur = ''
        else:
            cur += ch
    if cur: parts.append(cur)
    out = []
    for p in parts:
        if not p: continue
        b = p.find('{')
        if b >= 0:
            head = [x for x in p[:b].split('::') if x]
            out += _tree(p[b + 1:p.rindex('}')], prefix + tuple(head))
            continue
        alias = None
        if '@' in p:
            p, alias = p.split('@')
        segs = list(prefix) + [x for x in p.split('::') if x]
        if segs and segs[-1] == '*':
            out.append((segs[:-1], None))
        elif segs and segs[-1] == 'self':
            out.append((segs[:-1], alias or segs[-2]))
        elif segs:
            out.append((segs, alias or segs[-1]))
    return out


class Crate:
    def __init__(self, root):
        self.root = root
        self.files = {}  # module path (tuple) -> cleaned text
        self.items = {}  # module -> names defined there
        self.binds = {}  # module -> {name a `use` binds: absolute path}
        self.globs = {}  # module -> [absolute module path] of its `use x::*`
        self.uses = {}  # module -> [(absolute path, pub name or None)]
        self.paths = {}  # module -> [relative path segments] in code
        self.body = {}  # module -> cleaned text without its `use` declarations
        self.load((), os.path.join(root, 'lib.rs'))
        for m in self.files: self.scan(m)

    def load(self, mod, path):
        raw = open(path, encoding='utf-8', errors='replace').read()
        c = strip_tests(raw, clean(raw))
        self.files[mod] = c
        d = os.path.dirname(path)
        if mod and not path.endswith(('mod.rs', 'lib.rs')):
            d = os.path.join(d, os.path.basename(path)[:-3])
        for m in re.finditer(r'((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', c):
            name = m.group(2)
            pm = re.search(r'#\[path\s*=\s*"([^"]*)"\]', raw[m.start():m.end()])
            cands = ([os.path.join(os.path.dirname(path), pm.group(1))] if pm else
                     [os.path.join(d, name + '.rs'), os.path.join(d, name, 'mod.rs')])
            for p in cands:
                if os.path.exists(p):
                    self.load(mod + (name,), p); break

    def scan(self, mod):
        c = self.files[mod]
        self.items[mod] = {a or b for a, b in ITEM.findall(c)}
        self.binds[mod] = {}; self.globs[mod] = []; self.uses[mod] = []
        body = c
        for m in USE.finditer(c):
            body = body.replace(m.group(0), ' ' * len(m.group(0)), 1)
            for segs, name in _tree(re.sub(r'\s+as\s+', '@', m.group(2)).replace(' ', '')
                                    .replace('\n', '')):
                ab = self.absolute(mod, segs)
                if ab is None: continue
                # any `use` binds a name its module's children can reach by `super::`
                if name is None: self.globs[mod].append(ab)
                else: self.binds[mod][name] = ab
                if m.group(1):
                    self.uses[mod].append((ab, name if name else '*'))
                else:
                    self.uses[mod].append((ab, None))
        self.body[mod] = body
        self.paths[mod] = [re.sub(r'\s+', '', p).split('::') for p in PATH.findall(body)]

    def is_mod(self, m):
        return tuple(m) in self.files

    def absolute(self, mod, segs):
        """`segs` as written in `mod`, made absolute; None if it leaves the crate."""
        segs = list(segs)
        if not segs: return None
        if segs[0] == 'crate': return segs[1:]
        if segs[0] in ('self', 'super'):
            cur = list(mod)
            while segs and segs[0] in ('self', 'super'):
                if segs.pop(0) == 'super': cur = cur[:-1]
            return cur + segs
        if self.is_mod(tuple(mod) + (segs[0],)): return list(mod) + segs
        return None

    def resolve(self, segs, seen=0):
        """The module that defines the item `segs` (absolute) names."""
        cur = (); i = 0
        while i < len(segs) and self.is_mod(cur + (segs[i],)):
            cur += (segs[i],); i += 1
        if i == len(segs) or seen > 20: return cur
        name = segs[i]
        if name in self.binds.get(cur, {}) and name not in self.items.get(cur, ()):
            return self.resolve(self.binds[cur][name] + segs[i + 1:], seen + 1)
        if name not in self.items.get(cur, ()):
            for g in self.globs.get(cur, []):
                t = self.resolve(list(g) + segs[i:], seen + 1)
                if t != tuple(g) or name in self.items.get(tuple(g), ()): return t
        return cur

    def edges(self, mod):
        """{module (absolute) that `mod`'s code uses: the paths, as written, that use it}."""
        out = {}
        for ab, pub in self.uses[mod]:
            if pub == '*' or pub is not None and not re.search(
                    r'(?<![\w:])' + re.escape(pub) + r'\b', self.body[mod]):
                continue
            out.setdefault(self.resolve(ab), set()).add('use ' + '::'.join(ab))
        for segs in self.paths[mod]:
            ab = self.absolute(mod, segs)
            if ab is not None: out.setdefault(self.resolve(ab), set()).add('::'.join(segs))
        return out


def graph(root, depth):
    """({module: modules it uses}, {(module, used module): paths that use it})."""
    cr = Crate(root)
    key = lambda m: '::'.join(m[:depth]) if m else 'crate'
    g, why = {}, {}
    for mod in cr.files:
        k = key(mod)
        g.setdefault(k, set())
        for t, ps in cr.edges(mod).items():
            kt = key(t)
            if kt != k and kt != 'crate' and k != 'crate':
                g[k].add(kt)
                why.setdefault((k, kt), set()).update(f"{'::'.join(mod) or 'crate'}: {p}"
                                                      for p in ps)
    g.pop('crate', None)
    return g, why


def sccs(g):
    idx, low, st, on, res, n = {}, {}, [], set(), [], [0]

    def visit(v):
        idx[v] = low[v] = n[0]; n[0] += 1; st.append(v); on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in idx: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            res.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in idx: visit(v)
    return res


def report(root, depth, why_all):
    g, why = graph(root, depth)
    comps = sccs(g)
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    layer = {}
    for i, c in enumerate(comps):  # Tarjan emits components dependencies first
        deps = {comp_of[w] for v in c for w in g[v]} - {i}
        layer[i] = 1 + max((layer[j] for j in deps), default=-1)
    print(f'{root} (depth {depth}): {len(g)} modules')
    for L in range(max(layer.values(), default=-1) + 1):
        print(f'  layer {L}')
        for v in sorted(v for i, c in enumerate(comps) if layer[i] == L for v in c):
            mark = '  (cycle)' if len(comps[comp_of[v]]) > 1 else ''
            print(f"    {v:<22} -> {', '.join(sorted(g[v])) or '-'}{mark}")
            for w in sorted(g[v]) if why_all else ():
                for p in sorted(why[(v, w)]):
                    print(f'        {w}: {p}')
    cycles = [c for c in comps if len(c) > 1]
    for c in cycles:
        print(f'  CYCLE {c}')
        for v in c:
            print(f"    {v} -> {', '.join(sorted(w for w in g[v] if w in c))}")
            for w in sorted(w for w in g[v] if w in c):
                for p in sorted(why[(v, w)]):
                    print(f'      {v} -> {w}: {p}')
    print(f'  {len(cycles)} cycles')
    return len(cycles)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('roots', nargs='*', default=['sim/src', 'src'])
    ap.add_argument('--depth', type=int, default=1)
    ap.add_argument('--why', action='store_true', help='print the paths behind every edge')
    a = ap.parse_args()
    bad = sum(report(r, a.depth, a.why) for r in a.roots)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
