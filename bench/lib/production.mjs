// Imported first by the in-process tools: the apps are measured as they run
// in production (the server processes get NODE_ENV=production from
// lib/servers.mjs), so development-only parts such as responseLinter() are out.
process.env.NODE_ENV = 'production';
