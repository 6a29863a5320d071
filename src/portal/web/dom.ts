/** A few DOM helpers: elements are built with textContent, never innerHTML, so no value can become markup. */

type Child = Node | string | number | null | undefined | false;
/** An event handler; an async one's failure is announced, never left as an unhandled rejection. */
type Handler = (event: Event) => void | Promise<void>;
type Attributes = Record<string, string | number | boolean | undefined | Handler>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), (event) => void Promise.resolve(value(event)).catch(announceFailure));
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

export const badge = (text: string, kind = text) => h('span', { class: `status status-${kind}` }, text);

export const time = (iso: string | undefined) => (iso ? h('time', { datetime: iso }, new Date(iso).toLocaleString()) : '');

/** Announced to screen readers, shown for a few seconds. */
export function announce(message: string): void {
  const status = document.getElementById('status')!;
  status.textContent = message;
  window.setTimeout(() => status.textContent === message && (status.textContent = ''), 5000);
}

function announceFailure(err: unknown): void {
  announce(`Failed: ${err instanceof Error ? err.message : String(err)}`);
}

export function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', {}, label, control);
}

/** Copies text to the clipboard; on a page without clipboard access, selects it for Ctrl+C. */
export async function copy(text: string, fallback?: HTMLInputElement | HTMLTextAreaElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    announce('Copied');
  } catch {
    fallback?.select();
    announce('Select and press Ctrl+C to copy');
  }
}

export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  new FormData(form).forEach((value, key) => {
    if (typeof value === 'string') values[key] = value.trim();
  });
  return values;
}
