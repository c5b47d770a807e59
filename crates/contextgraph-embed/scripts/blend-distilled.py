#!/usr/bin/env python3
"""Blends a distilled table (scripts/distill-teacher.py, run with the shipped
model as --student, so both have the same vocabulary) into the shipped model,
after rotating it onto the shipped table's space (orthogonal Procrustes over
all rows): row = alpha * shipped + (1 - alpha) * rotated distilled, unit rows
scaled back to the shipped row's norm, written in the shipped int8 layout with
the shipped metadata (vocabulary, tokenizer). README "Round 5".

    python3 blend-distilled.py SHIPPED.safetensors DISTILLED.safetensors ALPHA OUT.safetensors

Needs numpy. Deterministic (an exact SVD).
"""
import sys, json, struct
import numpy as np
def read(path):
    b=open(path,'rb').read(); n=struct.unpack('<Q',b[:8])[0]
    return json.loads(b[8:8+n]), b[8+n:]
DT={'F32':np.float32,'I8':np.int8,'F16':np.float16}
def t(h,d,name):
    i=h[name]; s,e=i['data_offsets']
    return np.frombuffer(d[s:e],dtype=DT[i['dtype']]).reshape(i['shape']).astype(np.float32)
v3p, dp, alpha, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
hv, dv = read(v3p); hd, dd = read(dp)
V = t(hv,dv,'embeddings') * t(hv,dv,'scales')[:,None]
W = t(hv,dv,'weights')
D = t(hd,dd,'embeddings')
assert D.shape==V.shape, (D.shape,V.shape)
def unit(X):
    n=np.linalg.norm(X,axis=1,keepdims=True); n[n==0]=1; return X/n
Vn, Dn = unit(V), unit(D)
U,S,Wt = np.linalg.svd(Dn.T @ Vn)
R = U @ Wt
DR = Dn @ R
print('alignment: mean cos(DR, V) =', float(np.mean(np.sum(DR*Vn,axis=1))))
B = unit(alpha*Vn + (1-alpha)*DR)
# keep v3's row norms (its rows may not be unit length)
norms=np.linalg.norm(V,axis=1,keepdims=True)
B = B*norms
mx=np.abs(B).max(axis=1); sc=np.where(mx>0,mx/127.0,0).astype(np.float32)
q=np.where(sc[:,None]>0, np.clip(np.round(B/np.where(sc[:,None]>0,sc[:,None],1)),-127,127),0).astype(np.int8)
meta=dict(hv['__metadata__']); meta['name']=f"code-static-v3-blend{alpha}"
meta['training']=meta.get('training','')+f"; blended {alpha} with all-MiniLM-L6-v2 distilled rows (Procrustes-aligned)"
tensors=[('embeddings','I8',list(q.shape),q.tobytes()),('scales','F32',[len(sc)],sc.tobytes()),('weights','F32',[len(W)],W.astype(np.float32).tobytes())]
header={'__metadata__':meta}; off=0; blobs=[]
for name,dt,shape,b in tensors:
    header[name]={'dtype':dt,'shape':shape,'data_offsets':[off,off+len(b)]}; off+=len(b); blobs.append(b)
hb=json.dumps(header,separators=(',',':')).encode()
hb+=b' '*((8-len(hb)%8)%8)
with open(out,'wb') as f:
    f.write(struct.pack('<Q',len(hb))); f.write(hb)
    for b in blobs: f.write(b)
print('wrote',out)
