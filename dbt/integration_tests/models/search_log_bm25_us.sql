-- written by tests/test_dbt.py
SELECT * FROM {{ ref('search_log') }} WHERE market = 'us' AND engine = 'bm25'
