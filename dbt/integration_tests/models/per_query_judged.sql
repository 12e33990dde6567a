-- written by tests/test_dbt.py (python -m tests.test_dbt)
{{ rank_polars.evaluate_per_query(ref('search_log'),
    metrics=['ndcg@10', 'map', 'fallout@10', 'num_rel'],
    judgments=ref('judgments'), judgments_columns={'query': 'sid', 'item': 'product', 'relevance': 'label'},
    by=['engine', 'market'],
    query='search_id', item='sku',
    position='slot',
    relevance='grade', missing='zero') }}
