/** An OAuth request's parameters, each read once from the form (RFC 6749 §3.2: no parameter twice). */
export type Params = Readonly<Record<string, string>>;
