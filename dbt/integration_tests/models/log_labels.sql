-- written by tests/test_dbt.py (python -m tests.test_dbt)
{{ rank_polars.evaluate(ref('search_log'),
    metrics=['ndcg@10', 'map', 'mrr', 'P@5', 'recall@10', 'err@10', 'rprec', 'ndcg(ideal=run)@5', 'num_rel_ret'],
    by=['engine', 'market'],
    query='search_id', item='sku',
    position='slot',
    relevance='grade', missing='zero') }}
