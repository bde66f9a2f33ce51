/**
 * The pages of the authorization code flow: HTML for people, outside the
 * API's versioned resources (docs/conventions.md §3 names the API's paths).
 */

/** The sign-in page: GET shows the form, POST checks the password, opens the session and goes back to `returnTo`. */
export const SIGN_IN_PAGE = '/sign-in';

/** The consent page: names the client and the scopes; its form posts to the package's decision path. */
export const CONSENT_PAGE = '/consent';
