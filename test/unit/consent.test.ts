import { consentAllows, type ConsentSettings } from '../../src/rules/consent';

const withPreferences = (categoryPreferences: unknown) => ({ type: 'track', context: { consent: { categoryPreferences } } });
const absent = { type: 'track', context: {} };
const consentWithoutPreferences = { type: 'track', context: { consent: {} } };
const noContext = { type: 'track' };

const ads: ConsentSettings = { categories: ['Advertising'], whenAbsent: 'deliver' };
const adsAndAnalytics: ConsentSettings = { categories: ['Advertising', 'Analytics'], whenAbsent: 'deliver' };
const none: ConsentSettings = { categories: [], whenAbsent: 'deliver' };
const failClosed: ConsentSettings = { categories: ['Advertising'], whenAbsent: 'drop' };
const failClosedNoCategories: ConsentSettings = { categories: [], whenAbsent: 'drop' };

describe('consentAllows (Segment Consent Management)', () => {
  it.each<[string, Record<string, unknown>, ConsentSettings, boolean]>([
    ['granted', withPreferences({ Advertising: true }), ads, true],
    ['refused', withPreferences({ Advertising: false }), ads, false],
    ['every category must be granted', withPreferences({ Advertising: true, Analytics: false }), adsAndAnalytics, false],
    ['all granted', withPreferences({ Advertising: true, Analytics: true }), adsAndAnalytics, true],
    ['a category not mentioned is not granted', withPreferences({ Analytics: true }), ads, false],
    ['{} means every category is false', withPreferences({}), ads, false],
    ['only literal true grants', withPreferences({ Advertising: 'true' }), ads, false],
    ['categories are case sensitive', withPreferences({ advertising: true }), ads, false],
    ['no categories: delivered whatever the preferences', withPreferences({ Advertising: false }), none, true],
    ['no categories, {}: delivered', withPreferences({}), none, true],
    ['no consent object: delivered (Segment\'s default)', absent, ads, true],
    ['consent without categoryPreferences: delivered', consentWithoutPreferences, ads, true],
    ['no context: delivered', noContext, ads, true],
    ['whenAbsent drop: no consent object is dropped', absent, failClosed, false],
    ['whenAbsent drop: consent without categoryPreferences is dropped', consentWithoutPreferences, failClosed, false],
    ['whenAbsent drop: granted preferences still deliver', withPreferences({ Advertising: true }), failClosed, true],
    ['whenAbsent drop without categories: absent is dropped', absent, failClosedNoCategories, false],
    ['whenAbsent drop without categories: {} is delivered', withPreferences({}), failClosedNoCategories, true],
    ['preferences that are not an object grant nothing', withPreferences('Advertising'), ads, false],
    ['null preferences grant nothing', withPreferences(null), ads, false],
  ])('%s', (_, message, consent, allowed) => {
    expect(consentAllows(message, consent)).toBe(allowed);
  });
});
