'use strict';

const { encodeLexeme, wordsText, queryTokens, textValues } = require('../lib/words');
const { compileEs } = require('../lib/compile');
const { parse } = require('@mailgate/query');

describe('lexeme encoding (one ES token per PostgreSQL lexeme)', () => {
  test('plain lexemes stay as they are, others become _ + UTF-8 hex', () => {
    expect(encodeLexeme('kernel')).toBe('kernel');
    expect(encodeLexeme('x86')).toBe('x86');
    expect(encodeLexeme('vger.kernel.org')).toBe(
      '_' + Buffer.from('vger.kernel.org').toString('hex'),
    );
    expect(encodeLexeme('café')).toBe('_636166c3a9');
    // Injective across the two forms: a plain lexeme never contains `_`.
    expect(encodeLexeme('_6b')).not.toBe(encodeLexeme('k'));
  });

  test('positions: holes become gap tokens, shared positions are kept apart', () => {
    expect(wordsText(null)).toBe('');
    expect(
      wordsText([
        [1, 'a'],
        [2, 'b'],
        [5, 'c'],
      ]),
    ).toBe('a b _gap _gap c');
    expect(
      wordsText([
        [16382, 'x'],
        [16383, 'y'],
        [16383, 'z'],
      ]),
    ).toBe('x y _gap z');
    expect(
      queryTokens([
        [1, 'foo-bar'],
        [2, 'foo'],
      ]),
    ).toEqual([encodeLexeme('foo-bar'), 'foo']);
  });
});

describe('compileEs with PostgreSQL lexemes', () => {
  const ast = parse('die_if_kernel "kernel\'s" -###');
  const lexemes = new Map([
    [
      'die_if_kernel',
      [
        [1, 'die'],
        [2, 'if'],
        [3, 'kernel'],
      ],
    ],
    [
      "kernel's",
      [
        [1, 'kernel'],
        [2, 's'],
      ],
    ],
    ['###', []],
  ]);

  test('words are all lexemes, phrases in order, no lexeme matches nothing', () => {
    expect(textValues(ast).sort()).toEqual(['###', 'die_if_kernel', "kernel's"]);
    expect(compileEs(ast, { lexemes })).toEqual({
      bool: {
        filter: [
          { match: { words: { query: 'die if kernel', operator: 'and' } } },
          { match_phrase: { words: { query: 'kernel s' } } },
          { bool: { must_not: [{ match_none: {} }] } },
        ],
      },
    });
  });

  test('a word without its lexemes is a programming error', () => {
    expect(() => compileEs(parse('kernel'))).toThrow(/no PostgreSQL lexemes/);
  });
});
