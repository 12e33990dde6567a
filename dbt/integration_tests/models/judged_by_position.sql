-- written by tests/test_dbt.py (python -m tests.test_dbt)
{{ rank_polars.evaluate(ref('search_log'),
    metrics=['ndcg@10', 'nDCG', 'ndcg(gain=exp)@5', 'ndcg_cut.10', 'ndcg(discount=jarvelin)@5', 'map', 'ap@5', 'ap(denom=min)@5', 'gm_map', 'mrr', 'rr@3', 'P@5', 'P_5', 'P(rel=2)@5', 'p(relative=true)@5', 'recall@10', 'success@3', 'hits@3', 'f1@5', 'fallout@10', 'rprec', 'rprec(mult=0.5)', 'bpref', 'err@10', 'err(max=3)@10', 'judged@10', 'unj@5', 'dcg@5', 'idcg@5', 'cg@5', 'infap', '11pt_avg', 'iprec@0.5', 'set_p', 'set_r', 'set_ap', 'utility', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'num_nonrel_judged_ret', 'bing', 'g', 'ndcg_rel', 'rndcg', 'gm_bpref'],
    judgments=ref('judgments'), judgments_columns={'query': 'sid', 'item': 'product', 'relevance': 'label'},
    by=['engine', 'market'],
    query='search_id', item='sku',
    position='slot',
    relevance='grade', missing='zero') }}
