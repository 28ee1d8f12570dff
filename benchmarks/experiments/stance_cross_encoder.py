"""Probe, not a shipped part: can a MiniLM cross-encoder learn a claim's stance toward a case from CaseFacts train?

Fine-tunes the default MiniLM as a cross-encoder on (claim, question + conclusion of a relevant case) with the
label supported (1) or refuted (0), 6,329 train pairs (queries.jsonl and queries_overruled.jsonl), and after each
epoch prints dev stance accuracy and, on the 55 dev overruled propositions, how often the supported case scores
above the refuting one (what the outranks target needs). Reads ../shared/data; writes nothing.

    .venv/bin/python benchmarks/experiments/stance_cross_encoder.py LAYERS MAX_LENGTH EPOCHS   # e.g. 6 192 4

Result on this 2-core CPU (BENCHMARKS.md, learning section): no usable stance signal, so it was not built in.
"""
import sys, json, time, random, collections, numpy as np, torch
from pathlib import Path
torch.set_num_threads(2); torch.manual_seed(0); random.seed(0)
from citator.data import read_corpus, read_queries, read_ground_truth
from citator.models.encoder import default_encoder_path
from transformers import AutoTokenizer, AutoModelForSequenceClassification
D=str(Path(__file__).resolve().parents[2].parent / 'shared/data/stance/casefacts')
docs={d.doc_id:d for d in read_corpus(f'{D}/corpus.jsonl')}
def view(d):
    t=d.text
    q=t.split('Question:')[-1].split('Conclusion:')[0].strip() if 'Question:' in t else ''
    c=t.split('Conclusion:')[-1].strip() if 'Conclusion:' in t else t[-800:]
    return f'{q} {c}'
rows=[]
for f,g in [('queries','ground_truth'),('queries_overruled','ground_truth_overruled')]:
    gt=read_ground_truth(f'{D}/{g}.jsonl')
    for q in read_queries(f'{D}/{f}.jsonl'):
        if q.stance=='all': continue
        for d in gt.relevant(q.query_id):
            rows.append(dict(text=q.text, doc=d, y=int(q.stance=='supported'), split=q.split, src=f, pid=q.extra['proposition_id']))
tr=[r for r in rows if r['split']=='train']; dv=[r for r in rows if r['split']=='dev']
print(len(tr), len(dv), flush=True)
P=str(default_encoder_path())
tok=AutoTokenizer.from_pretrained(P)
L=int(sys.argv[1]) if len(sys.argv)>1 else 6; ML=int(sys.argv[2]) if len(sys.argv)>2 else 192
model=AutoModelForSequenceClassification.from_pretrained(P, num_labels=1, num_hidden_layers=L)
def batch(rs):
    return tok([r['text'] for r in rs],[view(docs[r['doc']]) for r in rs],truncation='only_second',max_length=ML,padding=True,return_tensors='pt')
opt=torch.optim.AdamW(model.parameters(), lr=4e-5, weight_decay=0.01)
EP=int(sys.argv[3]) if len(sys.argv)>3 else 2; B=16
steps=EP*((len(tr)+B-1)//B); sched=torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1,(s+1)/(0.1*steps))*max(0,(steps-s)/steps))
def evaluate():
    model.eval(); sc=[]
    with torch.no_grad():
        for i in range(0,len(dv),64):
            sc+=model(**batch(dv[i:i+64])).logits[:,0].tolist()
    model.train()
    for r,s in zip(dv,sc): r['s']=s
    for src in ['queries','queries_overruled']:
        rr=[r for r in dv if r['src']==src]
        acc=np.mean([(r['s']>0)==(r['y']==1) for r in rr])
        print(' dev',src,'acc %.3f n %d'%(acc,len(rr)), flush=True)
    # overruled pairwise: max s over sup docs > max s over ref docs
    byp=collections.defaultdict(lambda: {0:[],1:[]})
    for r in dv:
        if r['src']=='queries_overruled': byp[r['pid']][r['y']].append(r['s'])
    w=[max(v[1])>max(v[0]) for v in byp.values() if v[0] and v[1]]
    print(' overruled pair order %.3f n %d'%(np.mean(w),len(w)), flush=True)
t0=time.time(); step=0
for ep in range(EP):
    random.shuffle(tr)
    for i in range(0,len(tr),B):
        rs=tr[i:i+B]; b=batch(rs)
        y=torch.tensor([float(r['y']) for r in rs])
        loss=torch.nn.functional.binary_cross_entropy_with_logits(model(**b).logits[:,0], y)
        loss.backward(); opt.step(); sched.step(); opt.zero_grad(); step+=1
        if step%100==0: print(ep, step, '%.3f'%loss.item(), '%.0fs'%(time.time()-t0), flush=True)
    evaluate()
print('train s', time.time()-t0)
