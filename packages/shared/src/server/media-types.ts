/** The type of every JSON answer, as Fastify gives a serialised one; set by hand where a route sends text it serialised itself. */
export const JSON_UTF8 = 'application/json; charset=utf-8'
