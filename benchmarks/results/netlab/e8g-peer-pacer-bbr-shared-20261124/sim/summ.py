import sys,re,collections
def parse(fn):
    d=collections.defaultdict(list); sec=None
    for l in open(fn):
        if l.startswith('## '): sec=l.split()[1]; continue
        m=re.match(r'full\s+(\w+)\s+(\d+)\s+jobs.*?p50\s+([\d.]+) ms.*?p99\s+([\d.]+) ms.*?loss ([\d.]+).*?util ([\d.]+)',l)
        if not m: continue
        q=m.group(1); e=re.search(r'exact p50 ([\d.]+)',l)
        d[(sec,q)].append((float(m.group(3)),float(m.group(4)),float(m.group(5)),float(e.group(1)) if e else 0, float(m.group(6))))
    return d
files=sys.argv[1:]
ds=[parse(f) for f in files]
import statistics as st
print('%-14s'%'cell'+''.join('%-42s'%f for f in files))
for k in ds[0]:
    row='%-14s'%(k[0]+'/'+k[1])
    for d in ds:
        v=d.get(k,[])
        if not v: row+='%-42s'%'-'; continue
        p50=st.mean(x[0] for x in v); p99=st.mean(x[1] for x in v); loss=st.mean(x[2] for x in v); ex=st.mean(x[3] for x in v); u=st.mean(x[4] for x in v)
        s='%.1f/%.0f L%.2f u%.2f'%(p50,p99,loss,u)+(' ex%.0f'%ex if ex else '')
        row+='%-42s'%s
    print(row)
# corun ratio
for f,d in zip(files,ds):
    if ('corun','slack') in d:
        r=[a[3]/b[3] for a,b in zip(d[('corun','slack')],d[('corun','fifo')])]
        print(f,'corun exact slack/fifo per seed',[round(x,2) for x in r], 'ratio of means %.2f'%(st.mean(a[3] for a in d[('corun','slack')])/st.mean(b[3] for b in d[('corun','fifo')])))
