# How the "botocore-signed" Authorization values in __tests__/unit/kms.test.ts were recorded:
# botocore's SigV4Auth (the AWS SDK for Python's signer) with its clock pinned. It first reproduces
# AWS's published test-suite signatures, then signs the KMS and STS requests the AWS key service
# sends. Not run by the tests; run it with any botocore (1.43 was used): python3 sigv4-record.py
import datetime, json
from unittest import mock
import botocore.auth as A
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

def sign(method, url, headers, body, service, region, when, token=None, key='AKIDEXAMPLE', secret='wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'):
    req = AWSRequest(method=method, url=url, data=body, headers=headers)
    with mock.patch.object(A, 'get_current_datetime', return_value=when):
        A.SigV4Auth(Credentials(key, secret, token), service, region).add_auth(req)
    return dict(req.headers.items())

suite = datetime.datetime(2015, 8, 30, 12, 36, 0)
print('get-vanilla', sign('GET', 'https://example.amazonaws.com/', {}, b'', 'service', 'us-east-1', suite)['Authorization'])
print('query-order-key-case', sign('GET', 'https://example.amazonaws.com/?Param2=value2&Param1=value1', {}, b'', 'service', 'us-east-1', suite)['Authorization'])
print('post-vanilla', sign('POST', 'https://example.amazonaws.com/', {}, b'', 'service', 'us-east-1', suite)['Authorization'])
print('post-header-key-sort', sign('POST', 'https://example.amazonaws.com/', {'My-Header1': 'value1'}, b'', 'service', 'us-east-1', suite)['Authorization'])
print('session-token', sign('GET', 'https://example.amazonaws.com/', {}, b'', 'service', 'us-east-1', suite, token='6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267')['Authorization'])
print('iam', sign('GET', 'https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08', {'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8'}, b'', 'iam', 'us-east-1', suite)['Authorization'])

when = datetime.datetime(2026, 1, 15, 10, 0, 0)
arn = 'arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab'
body = json.dumps({'KeyId': arn, 'CiphertextBlob': 'AQIDAHhBRxDEXAMPLEciphertextblob==', 'EncryptionContext': {'team': 'infra'}}, separators=(',', ':'))
print('KMSBODY', body)
h = sign('POST', 'https://kms.us-west-2.amazonaws.com/', {'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'TrentService.Decrypt'}, body.encode(), 'kms', 'us-west-2', when)
print('kms', h)
h = sign('POST', 'https://kms.us-west-2.amazonaws.com/', {'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'TrentService.Decrypt'}, body.encode(), 'kms', 'us-west-2', when, token='AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE', key='AKIAIOSFODNN7EXAMPLE', secret='wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY')
print('kms-token', h)
sts_body = 'Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fdemo&RoleSessionName=testAssumeRoleSession'
h = sign('POST', 'https://sts.us-west-2.amazonaws.com/', {'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8'}, sts_body.encode(), 'sts', 'us-west-2', when)
print('sts', h)
