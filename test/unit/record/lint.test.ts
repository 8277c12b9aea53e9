import { describe, expect, it } from 'vitest';
import { brittleLocatorFindings, cssIds } from '../../../src/record/lint.js';

const reasons = (target: Parameters<typeof brittleLocatorFindings>[0]) => brittleLocatorFindings(target).map((f) => f.reason);

describe('brittle locators', () => {
  it.each([
    ['div:nth-child(2) > span:nth-child(3)', 'positional-css'],
    ['body > div > ul > li:nth-of-type(4)', 'positional-css'],
    ['html body div div section span', 'positional-css'],
    ['#ember123', 'generated-id'],
    ['#\\:r1\\:', 'generated-id'],
    ['[id=":r2:"] input', 'generated-id'],
    ['#mui-38291', 'generated-id'],
    ['#cart-a3f9c2e1 button', 'generated-id'],
    ['#row-1234567', 'generated-id'],
  ])('flags css %s as %s', (css, reason) => {
    expect(reasons(css)).toContain(reason);
  });

  it.each(['#login', '#search', 'form .submit', 'ul#done > li', '[data-testid=results] td.name', '#description', '#task-report', 'li:first-child'])(
    'leaves sound css %s alone',
    (css) => {
      expect(brittleLocatorFindings(css)).toEqual([]);
    },
  );

  it('flags absolute XPath and generated ids in XPath, not relative XPath', () => {
    expect(reasons({ xpath: '/html/body/div[2]/form/input[1]' })).toEqual(['absolute-xpath']);
    expect(reasons({ xpath: '(/html/body//a)[1]' })).toEqual(['absolute-xpath']);
    expect(reasons({ xpath: "//div[@id='ember42']" })).toEqual(['generated-id']);
    expect(reasons({ xpath: '//button[text()="Save"]' })).toEqual([]);
  });

  it('checks fallbacks too and names the locator', () => {
    const findings = brittleLocatorFindings({ testid: 'save', fallbacks: [{ css: '#ember9' }, { role: 'button', name: 'Save' }] });
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ code: 'brittle-locator', reason: 'generated-id', locator: 'css=#ember9' });
    expect(findings[0]!.message).toMatch(/generated id "ember9"/);
  });

  it('never flags testid, role, text or label strategies', () => {
    expect(brittleLocatorFindings({ testid: 'x:nth-child(1):nth-child(2)' })).toEqual([]);
    expect(brittleLocatorFindings({ label: '#ember1' })).toEqual([]);
  });

  it('reads ids out of selectors', () => {
    expect(cssIds('#a .b #c\\:d [id="e f"]')).toEqual(['a', 'c:d', 'e f']);
  });
});
