export * from '../stores/index.js';
