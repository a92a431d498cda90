// The tags filter cases the Node and browser tests share: publications
// with tags, and for every operator the SDK offers a filter, the
// publications it passes, and the tags of a last publication it passes.

// The publications every operator's channel gets, n = 1..5.
export const PUBS = [
  { ticker: 'AAPL', price: '150.25', category: 'tech' },
  { ticker: 'MSFT', price: '99.5', category: 'tech' },
  { ticker: 'BTC', price: '30000', source: 'crypto-x' },
  {},
  { ticker: 'GOOGL', price: 'abc' },
];

// Each case: the filter, the publications (n) it passes, and the tags of a
// last publication it passes, which ends the wait (anything not expected would
// arrive before it).
export const leaf = (key, cmp, val) => ({ key, cmp, val });
export const CASES = [
  { name: 'eq', filter: leaf('ticker', 'eq', 'AAPL'), want: [1], end: { ticker: 'AAPL' } },
  { name: 'neq', filter: leaf('ticker', 'neq', 'AAPL'), want: [2, 3, 4, 5], end: { ticker: 'X' } },
  { name: 'in', filter: { key: 'ticker', cmp: 'in', vals: ['AAPL', 'BTC'] }, want: [1, 3], end: { ticker: 'BTC' } },
  { name: 'nin', filter: { key: 'ticker', cmp: 'nin', vals: ['AAPL', 'BTC'] }, want: [2, 4, 5], end: { ticker: 'X' } },
  { name: 'ex', filter: { key: 'source', cmp: 'ex' }, want: [3], end: { source: 's' } },
  { name: 'nex', filter: { key: 'source', cmp: 'nex' }, want: [1, 2, 4, 5], end: {} },
  { name: 'sw', filter: leaf('ticker', 'sw', 'GO'), want: [5], end: { ticker: 'GOX' } },
  { name: 'ew', filter: leaf('ticker', 'ew', 'FT'), want: [2], end: { ticker: 'XFT' } },
  { name: 'ct', filter: leaf('ticker', 'ct', 'TC'), want: [3], end: { ticker: 'xTCx' } },
  { name: 'lt', filter: leaf('price', 'lt', '100'), want: [2], end: { price: '1' } },
  { name: 'lte', filter: leaf('price', 'lte', '150.25'), want: [1, 2], end: { price: '1' } },
  { name: 'gt', filter: leaf('price', 'gt', '150.25'), want: [3], end: { price: '1000000' } },
  { name: 'gte', filter: leaf('price', 'gte', '150.25'), want: [1, 3], end: { price: '1000000' } },
  {
    name: 'and',
    filter: { op: 'and', nodes: [leaf('category', 'eq', 'tech'), leaf('price', 'gt', '100')] },
    want: [1],
    end: { category: 'tech', price: '101' },
  },
  { name: 'or', filter: { op: 'or', nodes: [leaf('ticker', 'eq', 'BTC'), leaf('ticker', 'eq', 'GOOGL')] }, want: [3, 5], end: { ticker: 'BTC' } },
  { name: 'not', filter: { op: 'not', nodes: [{ key: 'ticker', cmp: 'ex' }] }, want: [4], end: {} },
];
