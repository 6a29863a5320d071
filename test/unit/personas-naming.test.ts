import { snakeCase } from '../../src/personas/naming';

describe('the trait key is the snake_case form of the name (seed, Personas rule 2)', () => {
  it.each([
    ['First Time Shopper', 'first_time_shopper'],
    ['total_revenue_180_days', 'total_revenue_180_days'],
    ['Total Revenue (180 days)', 'total_revenue_180_days'],
    ['totalRevenue180Days', 'total_revenue_180_days'],
    ['VIP Users', 'vip_users'],
    ['HTMLParser fans', 'html_parser_fans'],
    ['already-kebab-case', 'already_kebab_case'],
    ['  Café   crème  ', 'cafe_creme'],
    ['ÜBER Fans!', 'uber_fans'],
    ['Orders: last 7d', 'orders_last_7_d'],
    ['iPhone owners', 'i_phone_owners'],
    ['日本 fans', '日本_fans'],
    ['first_time_shopper', 'first_time_shopper'],
  ])('%j → %s', (name, key) => {
    expect(snakeCase(name)).toBe(key);
  });

  it.each(['', '   ', '!!!', '—'])('%j has no words, so no key', (name) => {
    expect(snakeCase(name)).toBe('');
  });

  it('is stable: the key of a key is itself', () => {
    for (const name of ['First Time Shopper', 'totalRevenue180Days', 'ÜBER Fans!']) expect(snakeCase(snakeCase(name))).toBe(snakeCase(name));
  });
});
