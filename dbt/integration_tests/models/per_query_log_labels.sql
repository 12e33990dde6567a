-- written by tests/test_dbt.py (python -m tests.test_dbt)
{{ rank_polars.evaluate_per_query(ref('search_log_us'),
    metrics=['ndcg@10', 'mrr'],
    by=['engine'],
    query='search_id', item='sku',
    score='score',
    relevance='grade', missing='zero') }}
