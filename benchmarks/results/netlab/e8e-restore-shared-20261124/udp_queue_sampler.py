import os,time,sys,re
out=open(sys.argv[1],'w')
while True:
    t=time.time()
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try:
            cl=open(f'/proc/{p}/cmdline','rb').read().split(b'\0')
        except Exception: continue
        if len(cl)<2 or not b'/tmp/e8e/agent-' in cl[0]: continue
        role=cl[1].decode()
        try:
            for line in open(f'/proc/{p}/net/udp').readlines()[1:]:
                f=line.split(); tx,rx=f[4].split(':')
                tx=int(tx,16); rx=int(rx,16)
                if rx or tx: out.write(f'{t:.3f} {role} {p} {tx} {rx}\n')
        except Exception: pass
    out.flush()
    time.sleep(0.003)
