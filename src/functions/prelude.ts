/**
 * The globals a Segment function finds, written in JavaScript and evaluated inside the QuickJS
 * context before the user's code (sandbox-session.ts). It receives the few host functions the
 * sandbox offers (`host`: logging, encodings, digests, URL parsing, fetch, timers, lodash) and
 * hides them: once the prelude has run, user code reaches the host only through these globals.
 *
 * Everything the prelude later relies on (JSON, Promise, the error classes) is captured here,
 * before user code can replace a global, so a script that overwrites `JSON` breaks only itself.
 * The prelude returns `run` and `fire` to the session; user code never sees them.
 */
export const PRELUDE = String.raw`(function (host) {
  'use strict';
  var G = globalThis;
  var stringify = JSON.stringify;
  var parse = JSON.parse;
  var PromiseCtor = Promise;
  var ObjectKeys = Object.keys;
  // Strings cross to the host as JSON: QuickJS hands strings over NUL-terminated, and binary
  // (latin1) data is full of NULs.
  function conv(value, from, to) { return parse(host.conv(stringify([value, from, to]))); }
  function digest(algorithm, key, data) { return parse(host.digest(stringify([algorithm, key === undefined ? null : key, data]))); }
  function define(name, value) {
    Object.defineProperty(G, name, { value: value, writable: true, configurable: true, enumerable: false });
  }

  // Segment's error classes: the disposition of a throw is read from its class (or its name).
  function errorClass(name) {
    var C = function (message) {
      var e = new Error(message === undefined ? '' : message);
      Object.setPrototypeOf(e, C.prototype);
      e.name = name;
      return e;
    };
    C.prototype = Object.create(Error.prototype, { constructor: { value: C, writable: true, configurable: true } });
    C.prototype.name = name;
    Object.setPrototypeOf(C, Error);
    Object.defineProperty(C, 'name', { value: name });
    return C;
  }
  var ERROR_NAMES = ['EventNotSupported', 'InvalidEventPayload', 'ValidationError', 'RetryError', 'DropEvent'];
  var errors = {};
  ERROR_NAMES.forEach(function (name) {
    errors[name] = errorClass(name);
    define(name, errors[name]);
  });

  // console: captured per invocation by the host (which caps it).
  function show(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.name + ': ' + value.message + (value.stack ? '\n' + value.stack : '');
    try {
      var s = stringify(value);
      return s === undefined ? String(value) : s;
    } catch (e) {
      return String(value);
    }
  }
  function logger(level) {
    return function () {
      var parts = [];
      for (var i = 0; i < arguments.length; i++) parts.push(show(arguments[i]));
      host.log(stringify([level, parts.join(' ')]));
    };
  }
  define('console', { log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug'), trace: logger('debug') });

  // Buffer: bytes kept as a binary (latin1) string; the host converts between encodings.
  function Buffer(binary) {
    if (!(this instanceof Buffer)) return Buffer.from.apply(null, arguments);
    Object.defineProperty(this, '_b', { value: binary, enumerable: false });
  }
  function bytesOf(value, encoding) {
    if (value instanceof Buffer) return value._b;
    if (typeof value === 'string') return conv(value, encoding || 'utf8', 'latin1');
    if (value instanceof ArrayBuffer) value = new Uint8Array(value);
    if (value && typeof value.length === 'number') {
      var s = '';
      for (var i = 0; i < value.length; i++) s += String.fromCharCode(Number(value[i]) & 255);
      return s;
    }
    throw new TypeError('The first argument must be a string, Buffer, ArrayBuffer or array');
  }
  Buffer.from = function (value, encoding) { return new Buffer(bytesOf(value, encoding)); };
  Buffer.alloc = function (size, fill) {
    var c = fill === undefined ? '\0' : bytesOf(typeof fill === 'number' ? [fill] : fill).charAt(0) || '\0';
    return new Buffer(c.repeat(size));
  };
  Buffer.isBuffer = function (value) { return value instanceof Buffer; };
  Buffer.byteLength = function (value, encoding) { return bytesOf(value, encoding).length; };
  Buffer.concat = function (list) { return new Buffer(list.map(function (b) { return bytesOf(b); }).join('')); };
  Buffer.prototype.toString = function (encoding) { return conv(this._b, 'latin1', encoding || 'utf8'); };
  Buffer.prototype.toJSON = function () {
    var data = [];
    for (var i = 0; i < this._b.length; i++) data.push(this._b.charCodeAt(i));
    return { type: 'Buffer', data: data };
  };
  Buffer.prototype.slice = Buffer.prototype.subarray = function (start, end) { return new Buffer(this._b.slice(start, end)); };
  Buffer.prototype.equals = function (other) { return other instanceof Buffer && other._b === this._b; };
  Object.defineProperty(Buffer.prototype, 'length', { get: function () { return this._b.length; } });
  define('Buffer', Buffer);
  define('atob', function (s) { return conv(String(s), 'base64', 'latin1'); });
  define('btoa', function (s) { return conv(String(s), 'latin1', 'base64'); });

  // crypto: createHash and createHmac (md5, sha1, sha256, sha512), hex, base64 or a Buffer.
  function digester(algorithm, key) {
    var chunks = [];
    var done = false;
    return {
      update: function (data, encoding) {
        if (done) throw new Error('Digest already called');
        chunks.push(bytesOf(data, encoding));
        return this;
      },
      digest: function (encoding) {
        if (done) throw new Error('Digest already called');
        done = true;
        var bytes = digest(String(algorithm), key === undefined ? undefined : bytesOf(key), chunks.join(''));
        return encoding ? conv(bytes, 'latin1', encoding) : new Buffer(bytes);
      },
    };
  }
  define('crypto', {
    createHash: function (algorithm) { return digester(algorithm); },
    createHmac: function (algorithm, key) { return digester(algorithm, key); },
  });

  // URLSearchParams, URL and Headers (the WHATWG shapes node-fetch and Node offer).
  function formEncode(s) {
    return encodeURIComponent(s).replace(/[!'()~]/g, function (c) { return '%' + c.charCodeAt(0).toString(16).toUpperCase(); }).replace(/%20/g, '+');
  }
  function formDecode(s) {
    try { return decodeURIComponent(s.replace(/\+/g, ' ')); } catch (e) { return s; }
  }
  function URLSearchParams(init) {
    Object.defineProperty(this, '_list', { value: [], writable: true });
    Object.defineProperty(this, '_url', { value: null, writable: true });
    var self = this;
    if (init instanceof URLSearchParams) init = init._list;
    if (typeof init === 'string') {
      (init.charAt(0) === '?' ? init.slice(1) : init).split('&').forEach(function (pair) {
        if (!pair) return;
        var at = pair.indexOf('=');
        self._list.push(at < 0 ? [formDecode(pair), ''] : [formDecode(pair.slice(0, at)), formDecode(pair.slice(at + 1))]);
      });
    } else if (Array.isArray(init)) {
      init.forEach(function (pair) { self._list.push([String(pair[0]), String(pair[1])]); });
    } else if (init && typeof init === 'object') {
      ObjectKeys(init).forEach(function (k) { self._list.push([k, String(init[k])]); });
    }
  }
  URLSearchParams.prototype._changed = function () { if (this._url) this._url._setSearch(this.toString()); };
  URLSearchParams.prototype.append = function (k, v) { this._list.push([String(k), String(v)]); this._changed(); };
  URLSearchParams.prototype.delete = function (k) { this._list = this._list.filter(function (p) { return p[0] !== String(k); }); this._changed(); };
  URLSearchParams.prototype.get = function (k) { var p = this._list.find(function (p) { return p[0] === String(k); }); return p ? p[1] : null; };
  URLSearchParams.prototype.getAll = function (k) { return this._list.filter(function (p) { return p[0] === String(k); }).map(function (p) { return p[1]; }); };
  URLSearchParams.prototype.has = function (k) { return this._list.some(function (p) { return p[0] === String(k); }); };
  URLSearchParams.prototype.set = function (k, v) {
    k = String(k);
    var at = this._list.findIndex(function (p) { return p[0] === k; });
    if (at < 0) this._list.push([k, String(v)]);
    else this._list = this._list.filter(function (p, i) { return p[0] !== k || i === at; }).map(function (p) { return p[0] === k ? [k, String(v)] : p; });
    this._changed();
  };
  URLSearchParams.prototype.sort = function () { this._list.sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; }); this._changed(); };
  URLSearchParams.prototype.forEach = function (fn, thisArg) { var self = this; this._list.forEach(function (p) { fn.call(thisArg, p[1], p[0], self); }); };
  URLSearchParams.prototype.entries = function () { return this._list.map(function (p) { return [p[0], p[1]]; })[Symbol.iterator](); };
  URLSearchParams.prototype.keys = function () { return this._list.map(function (p) { return p[0]; })[Symbol.iterator](); };
  URLSearchParams.prototype.values = function () { return this._list.map(function (p) { return p[1]; })[Symbol.iterator](); };
  URLSearchParams.prototype[Symbol.iterator] = URLSearchParams.prototype.entries;
  URLSearchParams.prototype.toString = function () { return this._list.map(function (p) { return formEncode(p[0]) + '=' + formEncode(p[1]); }).join('&'); };
  define('URLSearchParams', URLSearchParams);

  var URL_PARTS = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'];
  function URL(input, base) {
    if (!(this instanceof URL)) throw new TypeError("Class constructor URL cannot be invoked without 'new'");
    Object.defineProperty(this, '_p', { value: parse(host.url(String(input), base === undefined ? undefined : String(base))), writable: true });
    var params = new URLSearchParams(this._p.search);
    params._url = this;
    Object.defineProperty(this, 'searchParams', { value: params, enumerable: true });
  }
  URL.prototype._setSearch = function (search) { this._p = parse(host.url(this._p.href, undefined, 'search', search)); };
  URL_PARTS.forEach(function (part) {
    Object.defineProperty(URL.prototype, part, {
      get: function () { return this._p[part]; },
      set: part === 'origin' ? undefined : function (value) {
        this._p = parse(host.url(this._p.href, undefined, part, String(value)));
        if (part === 'search' || part === 'href') this.searchParams._list = new URLSearchParams(this._p.search)._list;
      },
      enumerable: true,
    });
  });
  URL.prototype.toString = URL.prototype.toJSON = function () { return this._p.href; };
  define('URL', URL);

  function Headers(init) {
    Object.defineProperty(this, '_map', { value: {}, writable: true });
    var self = this;
    if (init instanceof Headers) init.forEach(function (v, k) { self.append(k, v); });
    else if (Array.isArray(init)) init.forEach(function (pair) { self.append(pair[0], pair[1]); });
    else if (init && typeof init === 'object') ObjectKeys(init).forEach(function (k) { self.append(k, init[k]); });
  }
  Headers.prototype.append = function (k, v) { k = String(k).toLowerCase(); (this._map[k] = this._map[k] || []).push(String(v)); };
  Headers.prototype.set = function (k, v) { this._map[String(k).toLowerCase()] = [String(v)]; };
  Headers.prototype.get = function (k) { var v = this._map[String(k).toLowerCase()]; return v ? v.join(', ') : null; };
  Headers.prototype.has = function (k) { return Object.prototype.hasOwnProperty.call(this._map, String(k).toLowerCase()); };
  Headers.prototype.delete = function (k) { delete this._map[String(k).toLowerCase()]; };
  Headers.prototype.raw = function () { return this._map; };
  Headers.prototype.forEach = function (fn, thisArg) { var self = this; ObjectKeys(this._map).sort().forEach(function (k) { fn.call(thisArg, self.get(k), k, self); }); };
  Headers.prototype.entries = function () { var out = []; this.forEach(function (v, k) { out.push([k, v]); }); return out[Symbol.iterator](); };
  Headers.prototype.keys = function () { return ObjectKeys(this._map).sort()[Symbol.iterator](); };
  Headers.prototype.values = function () { var out = []; this.forEach(function (v) { out.push(v); }); return out[Symbol.iterator](); };
  Headers.prototype[Symbol.iterator] = Headers.prototype.entries;
  define('Headers', Headers);

  // Request, Response and fetch; the host sends the request through the egress guard.
  function bodyBytes(body, headers) {
    if (body === undefined || body === null) return undefined;
    if (body instanceof URLSearchParams) {
      if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
      return conv(body.toString(), 'utf8', 'latin1');
    }
    if (body instanceof Buffer) return body._b;
    if (typeof body !== 'string') body = String(body);
    if (!headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
    return conv(body, 'utf8', 'latin1');
  }
  function Body() {}
  Body.prototype.text = function () { var b = this._body; return PromiseCtor.resolve(b === undefined ? '' : conv(b, 'latin1', 'utf8')); };
  Body.prototype.json = function () { return this.text().then(function (t) { return parse(t); }); };
  Body.prototype.buffer = function () { return PromiseCtor.resolve(new Buffer(this._body || '')); };
  function Request(input, init) {
    init = init || {};
    var from = input instanceof Request ? input : null;
    this.url = from ? from.url : String(input instanceof URL ? input.href : input);
    this.method = String(init.method || (from ? from.method : 'GET')).toUpperCase();
    this.headers = new Headers(init.headers || (from ? from.headers : undefined));
    Object.defineProperty(this, '_body', { value: init.body !== undefined ? bodyBytes(init.body, this.headers) : from ? from._body : undefined });
  }
  Request.prototype = Object.create(Body.prototype);
  define('Request', Request);
  function Response(body, init) {
    init = init || {};
    this.status = init.status === undefined ? 200 : Number(init.status);
    this.statusText = init.statusText === undefined ? '' : String(init.statusText);
    this.headers = new Headers(init.headers);
    this.url = init.url || '';
    this.ok = this.status >= 200 && this.status < 300;
    Object.defineProperty(this, '_body', { value: init._bytes !== undefined ? init._bytes : bodyBytes(body, this.headers) });
  }
  Response.prototype = Object.create(Body.prototype);
  define('Response', Response);
  define('fetch', function (input, init) {
    return new PromiseCtor(function (resolve, reject) {
      var request = new Request(input, init);
      var headers = [];
      request.headers.forEach(function (v, k) { headers.push([k, v]); });
      host.fetch(stringify({ url: request.url, method: request.method, headers: headers, body: request._body })).then(function (answer) {
        var a = parse(answer);
        if (a.error) return reject(new Error(a.error));
        resolve(new Response(null, { status: a.status, statusText: a.statusText, headers: a.headers, url: a.url, _bytes: a.body }));
      }, reject);
    });
  });

  // Timers: they live only as long as the invocation (the host forgets them when it ends).
  var timers = {};
  var nextTimer = 1;
  function schedule(repeat) {
    return function (fn, ms) {
      var args = Array.prototype.slice.call(arguments, 2);
      var id = nextTimer++;
      timers[id] = { fn: fn, args: args, ms: Math.max(0, Number(ms) || 0), repeat: repeat };
      host.timer(id, timers[id].ms);
      return id;
    };
  }
  function cancel(id) { delete timers[id]; }
  define('setTimeout', schedule(false));
  define('setInterval', schedule(true));
  define('setImmediate', function (fn) { return schedule(false).apply(null, [fn, 0].concat(Array.prototype.slice.call(arguments, 1))); });
  define('clearTimeout', cancel);
  define('clearInterval', cancel);
  define('clearImmediate', cancel);

  // cache.load(key, ttlMs, fn): kept with the module state of this instance and version.
  var cached = {};
  define('cache', {
    load: function (key, ttl, fn) {
      key = String(key);
      var hit = cached[key];
      if (hit && (hit.expires === null || hit.expires > Date.now())) return hit.value;
      var value = PromiseCtor.resolve().then(function () { return fn(); });
      var entry = { value: value, expires: typeof ttl === 'number' && ttl >= 0 ? Date.now() + ttl : null };
      cached[key] = entry;
      value.catch(function () { if (cached[key] === entry) delete cached[key]; });
      return value;
    },
    delete: function (key) { delete cached[String(key)]; },
  });

  // lodash 4.17 is evaluated on first use: a function that never touches _ pays nothing for it.
  Object.defineProperty(G, '_', {
    // lodash reads the old _ (for noConflict) while it loads: it finds undefined, not this getter.
    get: function () { Object.defineProperty(G, '_', { value: undefined, writable: true, configurable: true }); host.lodash(); return G._; },
    set: function (value) { Object.defineProperty(G, '_', { value: value, writable: true, configurable: true }); },
    configurable: true,
  });

  // Segment.* for source functions: the calls are collected and ingested only when onRequest returns.
  var emitted = [];
  function emit(type, required) {
    return function (message) {
      if (!message || typeof message !== 'object') throw new errors.ValidationError(type + ' expects an object');
      required.forEach(function (field) { if (!message[field]) throw new errors.ValidationError(type + ' requires ' + field); });
      if (type !== 'set' && !message.userId && !message.anonymousId) throw new errors.ValidationError(type + ' requires userId or anonymousId');
      emitted.push({ type: type, message: parse(stringify(message)) });
    };
  }
  define('Segment', {
    identify: emit('identify', []), track: emit('track', ['event']), page: emit('page', []), screen: emit('screen', []),
    group: emit('group', ['groupId']), alias: emit('alias', ['previousId']), set: emit('set', ['collection', 'id']),
  });

  // A source function's request, as Segment's runtime builds it: json() answers the parsed body.
  function sourceRequest(raw) {
    var body = String(raw.body === undefined ? '' : raw.body);
    return {
      headers: new Headers(raw.headers || {}),
      url: new URL(raw.url),
      json: function () { return parse(body); },
      text: function () { return body; },
    };
  }

  function describe(e) {
    var type = 'Error';
    var message;
    host.describing(true);
    try {
      for (var i = 0; i < ERROR_NAMES.length; i++) if (e instanceof errors[ERROR_NAMES[i]]) type = ERROR_NAMES[i];
      if (type === 'Error' && e && typeof e === 'object' && ERROR_NAMES.indexOf(String(e.name)) >= 0) type = String(e.name);
      else if (type === 'Error' && e instanceof Error && typeof e.name === 'string') type = e.name;
      message = e instanceof Error || (e && typeof e === 'object' && 'message' in e) ? String(e.message) : 'a non-Error value was thrown: ' + String(e);
    } catch (inner) {
      message = 'a value was thrown that could not be read';
    } finally {
      host.describing(false);
    }
    return { type: type, message: message };
  }

  return {
    // One invocation: always settles with a JSON string (the host reads nothing else).
    run: function (name, eventJson, settingsJson, outputLimit) {
      emitted = [];
      timers = {};
      return new PromiseCtor(function (resolve) {
        var fn = G[name];
        if (typeof fn !== 'function') throw new errors.EventNotSupported(name + ' is not defined');
        var input = parse(eventJson);
        resolve(fn(name === 'onRequest' ? sourceRequest(input) : input, parse(settingsJson)));
      }).then(function (result) {
        var out = stringify({ ok: true, result: result === undefined ? null : result, emitted: emitted });
        if (out.length > outputLimit) return stringify({ ok: false, error: { type: 'OutputTooLarge', message: 'the handler returned ' + out.length + ' characters, over the limit of ' + outputLimit } });
        return out;
      }, function (e) {
        return stringify({ ok: false, error: describe(e) });
      });
    },
    fire: function (id) {
      var t = timers[id];
      if (!t) return -1;
      if (!t.repeat) delete timers[id];
      t.fn.apply(null, t.args);
      return t.repeat && timers[id] ? t.ms : -1;
    },
  };
})`;
