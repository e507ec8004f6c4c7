'use strict';

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.js'],
  globalSetup: '<rootDir>/packages/test-support/lib/global-setup.js',
  globalTeardown: '<rootDir>/packages/test-support/lib/global-teardown.js',
  testTimeout: 120000,
};
