-- written by tests/test_dbt.py (python -m tests.test_dbt)
{{ rank_polars.evaluate(ref('search_log_bm25_us'),
    metrics={'ndcg_10': 'ndcg@10', 'map': 'map', 'p_5': 'P@5'},
    judgments=ref('judgments'), judgments_columns={'query': 'sid', 'item': 'product', 'relevance': 'label'},
    query='search_id', item='sku',
    position='slot',
    relevance='grade', missing='zero') }}
