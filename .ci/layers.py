"""Checks the layering of mcp-registry/src, run by .ci/run: the code's imports (`use crate::..`
and `crate::..`/`super::..` paths, root re-exports resolved to their module; comments and doc
links left out) may not run up the order of `order` below, and no two top-level modules nor
two files (a module and its own children aside) may import each other. Exits 1 on a breach."""
import os,re,sys,collections
root='mcp-registry/src'
order=['sync','random','name','schema','protocol','apps','telemetry','tool','completion','prompt','resource','skill','server','task','registry','macro_support','dispatch','catalog','transport','replicas','client','agent','testing','guide','lib']
floor={m:i for i,m in enumerate(order)}
# root re-exports: name -> module
lib=open(os.path.join(root,'lib.rs')).read()
reexp={}
for m in re.finditer(r'pub use (\w+)::\{([^}]*)\}',lib):
    for n in re.split(r'[,\s]+',m.group(2)):
        if n: reexp[n.split(' as ')[-1]]=m.group(1)
for m in re.finditer(r'pub use (\w+)::(\w+);',lib):
    reexp[m.group(2)]=m.group(1)
def room(path):
    rel=os.path.relpath(path,root)
    top=rel.split(os.sep)[0]
    return top[:-3] if top.endswith('.rs') else top
files=[os.path.join(dp,f) for dp,_,fs in os.walk(root) for f in fs if f.endswith('.rs')]
arrows=collections.defaultdict(set)
filedeps=collections.defaultdict(set)
modfile={}
for f in files:
    r=room(f)
    if r in ('lib',): continue
    s=open(f).read()
    # cut unit tests
    s=s.split('#[cfg(test)]')[0]
    s='\n'.join(l for l in s.split('\n') if not l.strip().startswith('//'))
    for m in re.finditer(r'crate::(\w+)',s):
        t=m.group(1)
        t=reexp.get(t,t)
        if t in floor and t!=r and t not in ('__private',):
            arrows[(r,t)].add(os.path.relpath(f,root))
bad=[(a,b,sorted(v)) for (a,b),v in arrows.items() if floor.get(b,0)>floor.get(a,0)]
print(f"rooms: {len(set(a for a,_ in arrows)|set(b for _,b in arrows))}, arrows: {len(arrows)}")
problems=0
for a,b,v in sorted(bad):
    problems+=1
    print(f"UP: {a} -> {b}  ({', '.join(v[:3])})")
# circles between rooms
g=collections.defaultdict(set)
for (a,b) in arrows: g[a].add(b)
seen=set()
for a in list(g):
    for b in g[a]:
        if a in g.get(b,()) and (b,a) not in seen:
            seen.add((a,b)); problems+=1; print(f"CIRCLE: {a} <-> {b}")

# --- circles between files
root='mcp-registry/src'
files=[os.path.relpath(os.path.join(dp,f),root) for dp,_,fs in os.walk(root) for f in fs if f.endswith('.rs')]
def modpath(f):
    p=f[:-3].split(os.sep)
    if p[-1] in ('mod','lib'): p=p[:-1]
    return p
mods={tuple(modpath(f)):f for f in files}
def resolve(path):
    # longest prefix that is a module file
    for i in range(len(path),0,-1):
        if tuple(path[:i]) in mods: return mods[tuple(path[:i])]
    return None
deps=collections.defaultdict(set)
for f in files:
    s=open(os.path.join(root,f)).read().split('#[cfg(test)]')[0]
    s='\n'.join(l for l in s.split('\n') if not l.strip().startswith('//'))
    me=modpath(f)
    is_mod = f.endswith('mod.rs') or f=='lib.rs'
    base = me if is_mod else me[:-1]
    for m in re.finditer(r'\b(crate|super)((?:::\w+)+)',s):
        parts=m.group(2).strip(':').split('::')
        if m.group(1)=='crate': path=parts
        else:
            path=base[:-1]+parts if True else None
            # super from a non-mod file refers to parent module = base
            path=(base if not is_mod else me[:-1])+parts
        t=resolve(path)
        if t and t!=f: deps[f].add(t)
    # `use super::{a, b}` groups
    for m in re.finditer(r'use super::\{([^}]*)\}',s):
        for n in re.split(r'[,\s]+',m.group(1)):
            n=n.split('::')[0]
            if not n or n=='self': continue
            path=(base if not is_mod else me[:-1])+[n]
            t=resolve(path)
            if t and t!=f: deps[f].add(t)
# mod.rs files declare children; child->parent mod.rs arrows are normal (re-exports), skip parent(mod.rs)<->child pairs
circles=set()
for a in deps:
    for b in deps[a]:
        if a in deps.get(b,()):
            pa,pb=modpath(a),modpath(b)
            parentchild = pa==pb[:-1] or pb==pa[:-1]
            if not parentchild: circles.add(tuple(sorted((a,b))))
for c in sorted(circles): print('FILE CIRCLE:',c)
problems+=len(circles)
print(len(circles),'file circles (parent module <-> child excluded)')

sys.exit(1 if problems else 0)
