'use strict';

const { parse, compileSql, likeEscape, QueryError } = require('../lib');

// Count knex raw value placeholders: a lone `?` (knex reads `??` as an identifier binding and
// `\?` as a literal question mark; neither may appear in our output).
function placeholders(sql) {
  expect(sql).not.toMatch(/\?\?/);
  expect(sql).not.toMatch(/\\\?/);
  return (sql.match(/\?/g) || []).length;
}

function compile(q, opts = { userId: 7 }) {
  const out = compileSql(parse(q), opts);
  expect(placeholders(out.sql)).toBe(out.bindings.length);
  return out;
}

describe('likeEscape', () => {
  test.each([
    ['plain', 'plain'],
    ['100%', '100\\%'],
    ['a_b', 'a\\_b'],
    ['C:\\dir', 'C:\\\\dir'],
    ['%_\\', '\\%\\_\\\\'],
    ['\\%', '\\\\\\%'],
    ['', ''],
    ["it's", "it's"],
  ])('%j → %j', (input, out) => {
    expect(likeEscape(input)).toBe(out);
  });
});

describe('compileSql: one operator at a time', () => {
  test.each([
    ['', 'TRUE', []],
    ['happy', "m.tsv @@ plainto_tsquery('simple', ?)", ['happy']],
    ['"happy new year"', "m.tsv @@ phraseto_tsquery('simple', ?)", ['happy new year']],
    ['from:example', 'm.from_text ILIKE ?', ['%example%']],
    ['to:bob', 'm.to_text ILIKE ?', ['%bob%']],
    ['cc:carol', 'm.cc_text ILIKE ?', ['%carol%']],
    ['subject:"q3 report"', 'm.subject ILIKE ?', ['%q3 report%']],
    ['body:50%', 'm.body_text LIKE ?', ['%50\\%%']],
    ['text:happy', '(m.body_text LIKE ? OR m.header_text LIKE ?)', ['%happy%', '%happy%']],
    // header_text/body_text are stored lower-cased, so the pattern is lower-cased for LIKE.
    ['text:HaPPy', '(m.body_text LIKE ? OR m.header_text LIKE ?)', ['%happy%', '%happy%']],
    ['body:ÉTÉ', 'm.body_text LIKE ?', ['%été%']],
    ['is:read', '? = ANY(m.flags)', ['\\Seen']],
    ['is:unread', '((? = ANY(m.flags)) IS NOT TRUE)', ['\\Seen']],
    ['is:flagged', '? = ANY(m.flags)', ['\\Flagged']],
    ['is:unflagged', '((? = ANY(m.flags)) IS NOT TRUE)', ['\\Flagged']],
    ['is:deleted', '? = ANY(m.flags)', ['\\Deleted']],
    ['is:answered', '? = ANY(m.flags)', ['\\Answered']],
    ['is:draft', '? = ANY(m.flags)', ['\\Draft']],
    ['has:attachment', 'm.has_attachments', []],
    ['before:2024-01-02', 'm.date < ?::timestamptz', ['2024-01-02T00:00:00Z']],
    ['after:2024-01-02', 'm.date >= ?::timestamptz', ['2024-01-02T00:00:00Z']],
    [
      'on:2024-01-02',
      "(m.date >= ?::timestamptz AND m.date < ?::timestamptz + interval '24 hours')",
      ['2024-01-02T00:00:00Z', '2024-01-02T00:00:00Z'],
    ],
    ['larger:10k', 'm.size > ?::bigint', [10240]],
    ['smaller:1M', 'm.size < ?::bigint', [1048576]],
    [
      'in:inbox',
      'm.mailbox_id IN (SELECT id FROM mailboxes WHERE user_id = ? AND name = ?)',
      [7, 'INBOX'],
    ],
  ])('%j', (q, sql, bindings) => {
    expect(compile(q)).toEqual({ sql, bindings });
  });
});

describe('compileSql: structure', () => {
  test('and/or are parenthesised, bindings in textual order', () => {
    expect(compile('a b OR from:c')).toEqual({
      sql:
        "((m.tsv @@ plainto_tsquery('simple', ?) AND m.tsv @@ plainto_tsquery('simple', ?))" +
        ' OR m.from_text ILIKE ?)',
      bindings: ['a', 'b', '%c%'],
    });
  });

  test('negation is NULL-safe (IS NOT TRUE), for fields and dates alike', () => {
    expect(compile('-subject:x').sql).toBe('((m.subject ILIKE ?) IS NOT TRUE)');
    // Dates: the complement as ranges or NULL, which the date index answers (issue 35.2).
    expect(compile('-before:2024-01-01').sql).toBe('(m.date >= ?::timestamptz OR m.date IS NULL)');
    expect(compile('-after:2024-01-01').sql).toBe('(m.date < ?::timestamptz OR m.date IS NULL)');
    expect(compile('-on:2024-01-01')).toEqual({
      sql:
        '(m.date < ?::timestamptz OR m.date >= ?::timestamptz' +
        " + interval '24 hours' OR m.date IS NULL)",
      bindings: ['2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z'],
    });
    expect(compile('-has:attachment').sql).toBe('((m.has_attachments) IS NOT TRUE)');
    expect(compile('-(a OR b)').sql).toBe(
      "(((m.tsv @@ plainto_tsquery('simple', ?) OR m.tsv @@ plainto_tsquery('simple', ?)))" +
        ' IS NOT TRUE)',
    );
  });

  test('opts.words: the caller says how a word or phrase matches; top marks terms every hit meets', () => {
    const seen = [];
    const words = ({ alias, tsquery, bind, top }) => {
      seen.push(top);
      return `W(${alias}, ${bind('owner')}, ${tsquery()}, ${top})`;
    };
    const out = compile('a "b c" (x OR -y) from:z', { userId: 7, words });
    expect(out.sql).toBe(
      "(W(m, ?, plainto_tsquery('simple', ?), true) AND W(m, ?, phraseto_tsquery('simple', ?), true)" +
        " AND (W(m, ?, plainto_tsquery('simple', ?), false) OR ((W(m, ?, plainto_tsquery('simple', ?), false)) IS NOT TRUE))" +
        ' AND m.from_text ILIKE ?)',
    );
    // bindings in textual order, the caller's own before the term's
    expect(out.bindings).toEqual(['owner', 'a', 'owner', 'b c', 'owner', 'x', 'owner', 'y', '%z%']);
    expect(seen).toEqual([true, true, false, false]);
    expect(compile('a', { words }).sql).toBe("W(m, ?, plainto_tsquery('simple', ?), true)");
    expect(compile('-a', { words }).sql).toBe(
      "((W(m, ?, plainto_tsquery('simple', ?), false)) IS NOT TRUE)",
    );
    expect(() => compileSql(parse('a'), { words: 'message_words' })).toThrow(TypeError);
  });

  test('opts.substring: the caller says how body/text substrings match; other fields stay LIKE', () => {
    const seen = [];
    const substring = ({ alias, field, columns, value, bind, top, columnsLike }) => {
      seen.push({ field, columns, value, top });
      return `S(${alias}, ${bind('owner')}, ${top}, ${field === 'body' ? columnsLike() : 'x'})`;
    };
    const out = compile('text:Gas body:"Ölpreis %" subject:Gas (-text:q OR a)', {
      userId: 7,
      substring,
    });
    expect(out.sql).toBe(
      '(S(m, ?, true, x) AND S(m, ?, true, m.body_text LIKE ?) AND m.subject ILIKE ?' +
        " AND (((S(m, ?, false, x)) IS NOT TRUE) OR m.tsv @@ plainto_tsquery('simple', ?)))",
    );
    // the default test a caller can fall back on: lower-cased, metacharacters escaped
    expect(out.bindings).toEqual(['owner', 'owner', '%ölpreis \\%%', '%Gas%', 'owner', 'a']);
    expect(seen).toEqual([
      { field: 'text', columns: ['body_text', 'header_text'], value: 'gas', top: true },
      { field: 'body', columns: ['body_text'], value: 'ölpreis %', top: true },
      { field: 'text', columns: ['body_text', 'header_text'], value: 'q', top: false },
    ]);
    expect(() => compileSql(parse('a'), { substring: 'message_chunks' })).toThrow(TypeError);
  });

  test('alias', () => {
    const { sql } = compile('from:x in:Work', { alias: 'msg', userId: 1 });
    expect(sql).toBe(
      '(msg.from_text ILIKE ? AND msg.mailbox_id IN ' +
        '(SELECT id FROM mailboxes WHERE user_id = ? AND name = ?))',
    );
  });

  test('mailboxes table may be schema-qualified', () => {
    const { sql } = compile('in:Work', { userId: 1, mailboxesTable: 'u_1.mailboxes' });
    expect(sql).toContain('FROM u_1.mailboxes WHERE');
  });

  test('the output is a self-contained boolean that survives being AND-ed by the caller', () => {
    for (const q of ['a OR b', 'text:x', 'on:2024-01-01', '-a', 'a -b OR c']) {
      const { sql } = compile(q);
      // Either a single comparison or wrapped in parentheses as a whole.
      expect(sql.includes(' OR ') ? sql.startsWith('(') && sql.endsWith(')') : true).toBe(true);
    }
  });
});

describe('compileSql: user text only ever travels as a binding', () => {
  const hostile = [
    "'; DROP TABLE messages; --",
    'x) OR 1=1 --',
    '$1 $$ ?? ? \\? :name',
    '%_\\',
    "O'Brien",
    "E'\\x27'",
    '/* comment */',
    'ünïcödé \u{1F600}',
  ];

  test.each(hostile)('%j', (text) => {
    const asts = [
      { type: 'word', value: text },
      { type: 'phrase', value: text },
      ...['from', 'to', 'cc', 'subject', 'body', 'text'].map((field) => ({
        type: 'substring',
        field,
        value: text,
      })),
      { type: 'mailbox', value: text },
    ];
    for (const ast of asts) {
      const { sql, bindings } = compileSql({ type: 'not', child: ast }, { userId: 1 });
      expect(placeholders(sql)).toBe(bindings.length);
      expect(sql).not.toContain(text);
      expect(sql).not.toMatch(/DROP|1=1|O'Brien|comment|\$/);
      // The only quotes in the SQL are our own literals.
      expect(sql.replace(/'simple'|'24 hours'/g, '')).not.toContain("'");
      if (ast.type === 'substring') {
        // body/text columns are stored lower-cased, so their pattern is too.
        const lowered = ast.field === 'body' || ast.field === 'text';
        const pattern = `%${likeEscape(text)}%`;
        expect(bindings).toContain(lowered ? pattern.toLowerCase() : pattern);
      } else {
        expect(bindings).toContain(text);
      }
    }
  });

  test('parsed hostile query', () => {
    const { sql, bindings } = compile('subject:"\'; DROP TABLE x; --" from:%_\\');
    expect(sql).toBe('(m.subject ILIKE ? AND m.from_text ILIKE ?)');
    expect(bindings).toEqual(["%'; DROP TABLE x; --%", '%\\%\\_\\\\%']);
  });
});

describe('compileSql: rejects what it cannot compile safely', () => {
  test('missing userId for in:', () => {
    expect(() => compileSql(parse('in:INBOX'))).toThrow(/userId is required/);
  });

  test.each([['m; DROP'], ['1m'], [''], ['m.x'], [42]])('bad alias %j', (alias) => {
    expect(() => compileSql(parse('a'), { alias })).toThrow(TypeError);
  });

  test('bad mailboxes table', () => {
    expect(() =>
      compileSql(parse('in:x'), { userId: 1, mailboxesTable: 'mailboxes; DROP' }),
    ).toThrow(TypeError);
  });

  test.each([
    [{ type: 'substring', field: 'raw; DROP', value: 'x' }],
    [{ type: 'substring', field: 'from', value: '' }],
    [{ type: 'substring', field: 'from', value: 42 }],
    [{ type: 'flag', flag: 'Seen' }],
    [{ type: 'date', op: 'before', value: "2024-01-01'; --" }],
    [{ type: 'date', op: 'around', value: '2024-01-01' }],
    [{ type: 'size', op: 'larger', value: '10 OR 1=1' }],
    [{ type: 'size', op: 'larger', value: -1 }],
    [{ type: 'size', op: 'bigger', value: 1 }],
    [{ type: 'word', value: '' }],
    [{ type: 'word', value: 'a\u0000' }],
    [{ type: 'and', children: [] }],
    [{ type: 'or' }],
    [{ type: 'not' }],
    [{ type: 'sql', value: 'TRUE' }],
    [null],
  ])('malformed AST %j', (ast) => {
    expect(() => compileSql(ast, { userId: 1 })).toThrow(QueryError);
  });

  test('absurdly deep hand-built AST is a QueryError, not a stack overflow', () => {
    let ast = { type: 'word', value: 'a' };
    for (let i = 0; i < 100000; i += 1) ast = { type: 'not', child: ast };
    expect(() => compileSql(ast)).toThrow(QueryError);
  });

  test('hand-built flag with negate: true', () => {
    expect(compileSql({ type: 'flag', flag: '\\Deleted', negate: true })).toEqual({
      sql: '((? = ANY(m.flags)) IS NOT TRUE)',
      bindings: ['\\Deleted'],
    });
  });
});
