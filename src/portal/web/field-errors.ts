import { apiErrorField } from './api-field';
import { h } from './dom';

/**
 * A form's places for the API's errors: one beside each field and one for the form as a whole. The
 * message goes, in the API's own words, beside the field it names (api-field.ts), else below the form.
 */
export function fieldErrors<F extends string>(fields: readonly F[], inputs: Partial<Record<F, HTMLElement>> = {}) {
  const beside = Object.fromEntries(fields.map((name) => [name, h('span', { class: 'error field-error', role: 'alert', 'data-error-for': name })])) as Record<F, HTMLElement>;
  const form = h('p', { class: 'error', role: 'alert' });
  return {
    beside,
    form,
    clear: () => {
      for (const name of fields) {
        beside[name].textContent = '';
        inputs[name]?.removeAttribute('aria-invalid');
      }
      form.textContent = '';
    },
    show: (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      const name = apiErrorField(message, fields);
      if (!name) return void (form.textContent = message);
      beside[name].textContent = message;
      inputs[name]?.setAttribute('aria-invalid', 'true');
    },
  };
}
